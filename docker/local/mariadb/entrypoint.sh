# First start: an empty data dir is initialised, and root (from anywhere) gets MARIADB_ROOT_PASSWORD,
# or the content of MARIADB_ROOT_PASSWORD_FILE (a compose secret), through an init file that the server
# reads once and that is deleted as soon as the server answers: no file keeps the password.
# Arguments are mariadbd's.
set -euo pipefail
datadir=/var/lib/mysql
args=(--no-defaults --datadir="$datadir" --bind-address=0.0.0.0 --skip-name-resolve "$@")
if [ ! -d "$datadir/mysql" ]; then
  if [ -n "${MARIADB_ROOT_PASSWORD_FILE:-}" ]; then MARIADB_ROOT_PASSWORD=$(<"$MARIADB_ROOT_PASSWORD_FILE"); fi
  : "${MARIADB_ROOT_PASSWORD:?MARIADB_ROOT_PASSWORD or MARIADB_ROOT_PASSWORD_FILE is required}"
  mariadb-install-db --no-defaults --datadir="$datadir" --auth-root-authentication-method=normal --skip-test-db >/dev/null
  init=$(mktemp)
  chmod 600 "$init"
  password=${MARIADB_ROOT_PASSWORD//\'/\'\'}
  printf "ALTER USER 'root'@'localhost' IDENTIFIED BY '%s';\nCREATE USER 'root'@'%%' IDENTIFIED BY '%s';\nGRANT ALL ON *.* TO 'root'@'%%' WITH GRANT OPTION;\n" \
    "$password" "$password" >"$init"
  args+=(--init-file="$init")
  # The server runs the init file before it answers; this waits for that answer, then removes the file.
  (until mariadb-admin -h 127.0.0.1 ping --silent >/dev/null 2>&1; do sleep 0.5; done; rm -f "$init") &
fi
exec mariadbd "${args[@]}"
