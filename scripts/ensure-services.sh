#!/usr/bin/env bash
# Makes sure the services the test suite talks to are running on loopback:
# PostgreSQL (5432, trust auth, database "test"), Redis (6379) and RabbitMQ
# (5672, guest/guest).  Starts a stopped one; installs a missing one with
# apt-get.  Also installs Chromium (/usr/bin/chromium), which the
# microblog example's browser test drives.  Run as root (CI is).  Safe to
# run repeatedly.
set -uo pipefail

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() { # port seconds
  local i
  for ((i = 0; i < $2; i++)); do
    port_open "$1" && return 0
    sleep 1
  done
  return 1
}

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq || true
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

ensure_postgres() {
  if ! port_open 5432; then
    if ! command -v pg_ctlcluster >/dev/null || [ -z "$(ls /etc/postgresql 2>/dev/null)" ]; then
      echo "ensure-services: installing PostgreSQL"
      apt_install postgresql
    fi
    local version
    version=$(ls /etc/postgresql | sort -V | tail -n 1)
    local hba="/etc/postgresql/$version/main/pg_hba.conf"
    # The tests connect over TCP as "postgres" without a password.
    if ! grep -q "^host all all 127.0.0.1/32 trust" "$hba"; then
      sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
    fi
    echo "ensure-services: starting PostgreSQL $version"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
    wait_port 5432 30 || { echo "ensure-services: PostgreSQL did not start" >&2; return 1; }
  fi
  if ! psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" \
    | grep -q 1; then
    psql -h 127.0.0.1 -U postgres -c "CREATE DATABASE test" || true
  fi
}

ensure_redis() {
  port_open 6379 && return 0
  command -v redis-server >/dev/null || { echo "ensure-services: installing Redis"; apt_install redis-server; }
  mkdir -p /var/lib/redis /var/log/redis
  echo "ensure-services: starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  wait_port 6379 30 || { echo "ensure-services: Redis did not start" >&2; return 1; }
}

ensure_rabbitmq() {
  port_open 5672 && return 0
  command -v rabbitmq-server >/dev/null || {
    echo "ensure-services: installing RabbitMQ"
    apt_install rabbitmq-server
  }
  echo "ensure-services: starting RabbitMQ"
  rabbitmq-server -detached || true
  wait_port 5672 120 || { echo "ensure-services: RabbitMQ did not start" >&2; return 1; }
}

ensure_chromium() {
  [ -x /usr/bin/chromium ] && return 0
  echo "ensure-services: installing Chromium"
  apt_install chromium
  [ -x /usr/bin/chromium ] || { echo "ensure-services: Chromium did not install" >&2; return 1; }
}

status=0
ensure_chromium || status=1
ensure_postgres || status=1
ensure_redis || status=1
ensure_rabbitmq || status=1
exit $status
