#!/usr/bin/env bash
# Builds with podman, without any image registry, every image docker-compose.yml needs — from Debian's
# packages, this checkout's Node 24 and the native stack's jar cache — and writes docker/local/images.env,
# which points compose at them. Run as root (rootful podman). Timings and sizes go to stdout.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
export CONTAINERS_CONF="$root/docker/local/containers.conf"
work="$root/.flashgate/images"
mkdir -p "$work"

elapsed() { echo "$(($(date +%s) - $1)) s"; }
size() { podman image inspect --format '{{.Size}}' "$1" | awk '{printf "%.0f MB", $1 / 1e6}'; }
build() { # name context [containerfile] [podman build args…]
  local name=$1 context=$2 file=${3:-$2/Containerfile}
  shift 3 || shift $#
  local started
  started=$(date +%s)
  podman build -q --network host -f "$file" -t "$name" "$@" "$context" >/dev/null
  echo "local images: $name built in $(elapsed "$started"), $(size "$name")"
}

# The base: a minimal Debian bookworm from its packages, made once and kept as a tarball, then the
# machine's own CAs added (docker/local/debian/Containerfile).
if ! podman image exists localhost/flashgate/debian-minbase:bookworm; then
  started=$(date +%s)
  if [ ! -f "$work/debian-bookworm.tar" ]; then
    rm -rf "$work/rootfs"
    debootstrap --variant=minbase bookworm "$work/rootfs" http://deb.debian.org/debian >/dev/null
    tar -C "$work/rootfs" -cf "$work/debian-bookworm.tar.partial" .
    mv "$work/debian-bookworm.tar.partial" "$work/debian-bookworm.tar"
    rm -rf "$work/rootfs"
  fi
  podman import -q "$work/debian-bookworm.tar" localhost/flashgate/debian-minbase:bookworm >/dev/null
  echo "local images: debootstrap and import in $(elapsed "$started")"
fi
rm -rf "$work/debian" && mkdir -p "$work/debian/ca-certificates"
cp docker/local/debian/Containerfile "$work/debian/"
cp /usr/local/share/ca-certificates/*.crt "$work/debian/ca-certificates/" 2>/dev/null || true
build localhost/flashgate/debian:bookworm "$work/debian"

# Node 24 and npm: the binary the `node` package brought into this checkout, the npm the machine has.
rm -rf "$work/node" && mkdir -p "$work/node"
cp docker/local/node/Containerfile "$work/node/"
cp "$(readlink -f node_modules/node/bin/node)" "$work/node/node"
cp -r "$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")" "$work/node/npm"
build localhost/flashgate/node:24 "$work/node"

build localhost/flashgate/jre:17 docker/local/jre
build localhost/flashgate/maven:3 docker/local/jre docker/local/jre/Maven.Containerfile
build localhost/flashgate/redis:7 docker/local/redis

# The database: the MySQL 8 server the native stack unpacked (the test setup fetches it first), or MariaDB.
server="$root/.flashgate/jars/mysql/server"
[ -x "$server/bin/mysqld" ] || { echo "no MySQL server in $server: run npm start (or npm test) once" >&2; exit 1; }
rm -rf "$work/mysql" && mkdir -p "$work/mysql"
cp docker/local/mysql/Containerfile docker/local/mysql/entrypoint.sh "$work/mysql/"
cp -r "$server" "$work/mysql/server"
build localhost/flashgate/mysql:8 "$work/mysql"
build localhost/flashgate/mariadb:10.11 docker/local/mariadb

# flashgate's own images, from the files a Docker user builds them with.
build localhost/flashgate/app:latest . Dockerfile --build-arg NODE_IMAGE=localhost/flashgate/node:24
# Its Maven step reads the jars from this machine's Maven repository, where the native stack's fetch put them
# (the same pom): 9 s instead of 61 s downloading them again, the same jars.
mkdir -p "$HOME/.m2"
build localhost/flashgate/kafka:latest . docker/kafka/Dockerfile \
  --build-arg MAVEN_IMAGE=localhost/flashgate/maven:3 --build-arg JRE_IMAGE=localhost/flashgate/jre:17 \
  --volume "$HOME/.m2:/root/.m2"

cat >docker/local/images.env <<'ENV'
MYSQL_IMAGE=localhost/flashgate/mysql:8
MARIADB_IMAGE=localhost/flashgate/mariadb:10.11
REDIS_IMAGE=localhost/flashgate/redis:7
FLASHGATE_KAFKA_IMAGE=localhost/flashgate/kafka:latest
FLASHGATE_APP_IMAGE=localhost/flashgate/app:latest
ENV
echo "local images: docker/local/images.env written"
