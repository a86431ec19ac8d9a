# First start: an empty data dir is initialised, and root (from anywhere) gets MYSQL_ROOT_PASSWORD
# through an init file read once by the server. Arguments are mysqld's.
set -euo pipefail
datadir=/var/lib/mysql
args=(--no-defaults --basedir=/opt/mysql --datadir="$datadir" --bind-address=0.0.0.0 --mysqlx=OFF
  --skip-name-resolve --socket=/tmp/mysql.sock "$@")
if [ ! -d "$datadir/mysql" ]; then
  : "${MYSQL_ROOT_PASSWORD:?MYSQL_ROOT_PASSWORD is required}"
  /opt/mysql/bin/mysqld --no-defaults --basedir=/opt/mysql --datadir="$datadir" --initialize-insecure
  init=$(mktemp)
  chmod 600 "$init"
  password=${MYSQL_ROOT_PASSWORD//\'/\'\'}
  printf "ALTER USER 'root'@'localhost' IDENTIFIED BY '%s';\nCREATE USER 'root'@'%%' IDENTIFIED BY '%s';\nGRANT ALL ON *.* TO 'root'@'%%' WITH GRANT OPTION;\n" \
    "$password" "$password" >"$init"
  args+=(--init-file="$init")
fi
exec /opt/mysql/bin/mysqld "${args[@]}"
