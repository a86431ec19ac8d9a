# First start: an empty data dir is initialised, and root (from anywhere) gets MARIADB_ROOT_PASSWORD
# through an init file read once by the server. Arguments are mariadbd's.
set -euo pipefail
datadir=/var/lib/mysql
args=(--no-defaults --datadir="$datadir" --bind-address=0.0.0.0 --skip-name-resolve "$@")
if [ ! -d "$datadir/mysql" ]; then
  : "${MARIADB_ROOT_PASSWORD:?MARIADB_ROOT_PASSWORD is required}"
  mariadb-install-db --no-defaults --datadir="$datadir" --auth-root-authentication-method=normal --skip-test-db >/dev/null
  init=$(mktemp)
  chmod 600 "$init"
  password=${MARIADB_ROOT_PASSWORD//\'/\'\'}
  printf "ALTER USER 'root'@'localhost' IDENTIFIED BY '%s';\nCREATE USER 'root'@'%%' IDENTIFIED BY '%s';\nGRANT ALL ON *.* TO 'root'@'%%' WITH GRANT OPTION;\n" \
    "$password" "$password" >"$init"
  args+=(--init-file="$init")
fi
exec mariadbd "${args[@]}"
