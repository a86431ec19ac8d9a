# First start: an empty data dir is initialised, and root (from anywhere) gets MYSQL_ROOT_PASSWORD,
# or the content of MYSQL_ROOT_PASSWORD_FILE (a compose secret), through an init file that the server
# reads once and that is deleted as soon as the server answers: no file keeps the password.
# Arguments are mysqld's.
set -euo pipefail
datadir=/var/lib/mysql
args=(--no-defaults --basedir=/opt/mysql --datadir="$datadir" --bind-address=0.0.0.0 --mysqlx=OFF
  --skip-name-resolve --socket=/tmp/mysql.sock "$@")
if [ ! -d "$datadir/mysql" ]; then
  if [ -n "${MYSQL_ROOT_PASSWORD_FILE:-}" ]; then MYSQL_ROOT_PASSWORD=$(<"$MYSQL_ROOT_PASSWORD_FILE"); fi
  : "${MYSQL_ROOT_PASSWORD:?MYSQL_ROOT_PASSWORD or MYSQL_ROOT_PASSWORD_FILE is required}"
  /opt/mysql/bin/mysqld --no-defaults --basedir=/opt/mysql --datadir="$datadir" --initialize-insecure
  init=$(mktemp)
  chmod 600 "$init"
  password=${MYSQL_ROOT_PASSWORD//\'/\'\'}
  printf "ALTER USER 'root'@'localhost' IDENTIFIED BY '%s';\nCREATE USER 'root'@'%%' IDENTIFIED BY '%s';\nGRANT ALL ON *.* TO 'root'@'%%' WITH GRANT OPTION;\n" \
    "$password" "$password" >"$init"
  args+=(--init-file="$init")
  # The server runs the init file before it answers; this waits for that answer, then removes the file.
  (until mysqladmin -h 127.0.0.1 ping --silent >/dev/null 2>&1; do sleep 0.5; done; rm -f "$init") &
fi
exec /opt/mysql/bin/mysqld "${args[@]}"
