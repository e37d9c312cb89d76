#!/usr/bin/env bash
# Makes sure what the test suite needs is there: PostgreSQL on loopback
# (5432, user "postgres" without a password, database "test"), Redis (6379),
# a three-master Redis Cluster (127.0.0.1:7000-7002, nothing kept on disk),
# RabbitMQ (5672, guest/guest), Chromium (/usr/bin/chromium), which the
# microblog example's browser test drives, and nginx (/usr/sbin/nginx),
# which the self-hosting test starts itself as a foreground process on
# loopback (it needs only the binary: no nginx service is started here).
# `npm test` runs it first.
#
# It looks first, and when nothing is missing it says "all present" and
# does nothing, in well under a second.  Otherwise, as root, it installs
# what is missing with apt-get and starts what is stopped; as anyone else
# (or as root without apt-get) it changes nothing and prints one message:
# what is missing and the one command that provides it.  Safe to run
# repeatedly.
#
# Usage: bash scripts/ensure-services.sh [--check]
#   --check  only looks: exits 0 saying "all present", or lists what is
#            missing and exits 1; never installs or starts anything.
set -uo pipefail

CHROMIUM=/usr/bin/chromium
NGINX=/usr/sbin/nginx
check_only=0
case "${1:-}" in
  "") ;;
  --check) check_only=1 ;;
  *)
    echo "usage: bash scripts/ensure-services.sh [--check]" >&2
    exit 2
    ;;
esac

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() { # port seconds
  local i
  for ((i = 0; i < $2; i++)); do
    port_open "$1" && return 0
    sleep 1
  done
  return 1
}

# The Redis Cluster the cluster tests use: three masters, no replicas.
CLUSTER_PORTS=(7000 7001 7002)
CLUSTER_DIR=/var/lib/redis-cluster

# Whether all three nodes answer and agree that every slot is served.
cluster_ok() {
  local port
  command -v redis-cli >/dev/null || return 1
  for port in "${CLUSTER_PORTS[@]}"; do
    port_open "$port" || return 1
  done
  redis-cli -h 127.0.0.1 -p "${CLUSTER_PORTS[0]}" cluster info 2>/dev/null |
    grep -q '^cluster_state:ok'
}

postgres_installed() {
  command -v pg_ctlcluster >/dev/null && [ -n "$(ls /etc/postgresql 2>/dev/null)" ]
}

# -w: never wait for a password prompt; the tests use none.
database_exists() {
  [ "$(psql -w -h 127.0.0.1 -U postgres -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname = 'test'" 2>/dev/null)" = 1 ]
}

# The multi-process suites run on three runtimes side by side, each worker
# process with its own pools: PostgreSQL's default of 100 connections runs
# out ("sorry, too many clients already").
PG_CONNECTIONS=500
max_connections() {
  psql -w -h 127.0.0.1 -U postgres -d postgres -tAc "SHOW max_connections" 2>/dev/null
}
enough_connections() {
  local current
  current=$(max_connections)
  [ -n "$current" ] && [ "$current" -ge "$PG_CONNECTIONS" ]
}

# Fills these from what is on the machine now.
missing=()  # one line per missing thing, for people
packages=() # what apt-get must install
starts=()   # what must be started: postgres, redis, redis_cluster, rabbitmq
survey() {
  missing=()
  packages=()
  starts=()
  if [ ! -x "$CHROMIUM" ]; then
    missing+=("Chromium ($CHROMIUM), for the example's browser test: not installed")
    packages+=(chromium)
  fi
  if [ ! -x "$NGINX" ]; then
    missing+=("nginx ($NGINX), for the self-hosting test behind a reverse proxy: not installed")
    packages+=(nginx)
  fi
  if port_open 5432; then
    # Without psql the database cannot be looked at; someone running
    # PostgreSQL without it (in a container, say) looks after it themselves.
    if command -v psql >/dev/null && ! database_exists; then
      missing+=('PostgreSQL database "test" (user postgres, no password): absent')
    fi
    if command -v psql >/dev/null && postgres_installed && ! enough_connections; then
      missing+=("PostgreSQL max_connections: $(max_connections), the suites need $PG_CONNECTIONS")
      starts+=(postgres)
    fi
  elif postgres_installed; then
    missing+=("PostgreSQL on 127.0.0.1:5432: installed, not running")
    starts+=(postgres)
  else
    missing+=("PostgreSQL on 127.0.0.1:5432: not installed")
    packages+=(postgresql)
    starts+=(postgres)
  fi
  if ! port_open 6379; then
    if command -v redis-server >/dev/null; then
      missing+=("Redis on 127.0.0.1:6379: installed, not running")
    else
      missing+=("Redis on 127.0.0.1:6379: not installed")
      packages+=(redis-server)
    fi
    starts+=(redis)
  fi
  if ! cluster_ok; then
    if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
      missing+=("Redis Cluster on 127.0.0.1:${CLUSTER_PORTS[0]}-${CLUSTER_PORTS[2]}: not running (or not formed)")
    else
      missing+=("Redis Cluster on 127.0.0.1:${CLUSTER_PORTS[0]}-${CLUSTER_PORTS[2]}: redis-server not installed")
      [[ " ${packages[*]} " == *" redis-server "* ]] || packages+=(redis-server)
    fi
    starts+=(redis_cluster)
  fi
  if ! port_open 5672; then
    if command -v rabbitmq-server >/dev/null; then
      missing+=("RabbitMQ on 127.0.0.1:5672: installed, not running")
    else
      missing+=("RabbitMQ on 127.0.0.1:5672: not installed")
      packages+=(rabbitmq-server)
    fi
    starts+=(rabbitmq)
  fi
}

# The one message for a machine this script may not change (or did not
# manage to): what is missing, then the command that provides it.
report_missing() { # heading [tell the fix: 1 or 0]
  local line
  {
    echo "ensure-services: $1"
    for line in "${missing[@]}"; do echo "  - $line"; done
    if [ "${2:-1}" = 0 ]; then
      echo "See the messages above for why."
    elif [ "$(id -u)" = 0 ] && [ ${#packages[@]} -gt 0 ] && ! command -v apt-get >/dev/null; then
      echo "apt-get is not available here: install ${packages[*]} (Debian's names) with this"
      echo "system's package manager, then run: bash scripts/ensure-services.sh"
    else
      local does="starts and sets up the rest"
      [ ${#packages[@]} -gt 0 ] && does="installs ${packages[*]} with apt-get and $does"
      local sudo=""
      [ "$(id -u)" = 0 ] || sudo="sudo "
      echo "Run this once as root; it $does:"
      echo "  ${sudo}bash scripts/ensure-services.sh"
    fi
  } >&2
}

start_postgres() {
  local version hba
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  hba="/etc/postgresql/$version/main/pg_hba.conf"
  # The tests connect over TCP as "postgres" without a password.
  if ! grep -q "^host all all 127.0.0.1/32 trust" "$hba"; then
    sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
    # A cluster the package's installation started must read it too.
    port_open 5432 && pg_ctlcluster --skip-systemctl-redirect "$version" main reload
  fi
  if ! port_open 5432; then
    echo "ensure-services: starting PostgreSQL $version"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
    wait_port 5432 30 || { echo "ensure-services: PostgreSQL did not start" >&2; return 0; }
  fi
  if command -v psql >/dev/null && ! enough_connections; then
    # Takes effect at a restart only.
    echo "ensure-services: raising PostgreSQL's max_connections to $PG_CONNECTIONS (a restart)"
    psql -w -h 127.0.0.1 -U postgres -d postgres -qc \
      "ALTER SYSTEM SET max_connections = $PG_CONNECTIONS"
    pg_ctlcluster --skip-systemctl-redirect "$version" main restart || true
    wait_port 5432 30 || echo "ensure-services: PostgreSQL did not restart" >&2
  fi
}

start_redis() {
  port_open 6379 && return 0
  mkdir -p /var/lib/redis /var/log/redis
  echo "ensure-services: starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  wait_port 6379 30 || echo "ensure-services: Redis did not start" >&2
}

# Starts the three cluster nodes afresh and forms the cluster.  The nodes
# keep no data, so a cluster that is only partly up (a node died, or a
# machine restarted) is torn down and formed again: its keys are test data.
start_redis_cluster() {
  local port i
  cluster_ok && return 0
  echo "ensure-services: starting a Redis Cluster on 127.0.0.1:${CLUSTER_PORTS[0]}-${CLUSTER_PORTS[2]}"
  for port in "${CLUSTER_PORTS[@]}"; do
    port_open "$port" && redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1
  done
  for port in "${CLUSTER_PORTS[@]}"; do
    for ((i = 0; i < 50; i++)); do port_open "$port" || break; sleep 0.1; done
    rm -rf "${CLUSTER_DIR:?}/$port"
    mkdir -p "$CLUSTER_DIR/$port"
    redis-server --daemonize yes --bind 127.0.0.1 --port "$port" --cluster-enabled yes \
      --cluster-config-file nodes.conf --cluster-node-timeout 5000 --save "" \
      --appendonly no --dir "$CLUSTER_DIR/$port" --logfile "$CLUSTER_DIR/$port/redis.log"
  done
  for port in "${CLUSTER_PORTS[@]}"; do
    wait_port "$port" 30 || { echo "ensure-services: Redis Cluster node $port did not start" >&2; return 0; }
  done
  redis-cli --cluster create "${CLUSTER_PORTS[@]/#/127.0.0.1:}" --cluster-replicas 0 \
    --cluster-yes >"$CLUSTER_DIR/create.log" 2>&1 ||
    { echo "ensure-services: redis-cli --cluster create failed; see $CLUSTER_DIR/create.log" >&2; return 0; }
  # The nodes agree on the slots a moment after the create returns.
  for ((i = 0; i < 100; i++)); do cluster_ok && return 0; sleep 0.1; done
  echo "ensure-services: the Redis Cluster did not reach cluster_state:ok" >&2
}

start_rabbitmq() {
  port_open 5672 && return 0
  echo "ensure-services: starting RabbitMQ"
  rabbitmq-server -detached || true
  wait_port 5672 120 || echo "ensure-services: RabbitMQ did not start" >&2
}

survey
if [ ${#missing[@]} -eq 0 ]; then
  echo "ensure-services: all present (Chromium, nginx, PostgreSQL, Redis, Redis Cluster, RabbitMQ)"
  exit 0
fi
if [ "$check_only" = 1 ]; then
  report_missing "missing:"
  exit 1
fi
if [ "$(id -u)" != 0 ] || { [ ${#packages[@]} -gt 0 ] && ! command -v apt-get >/dev/null; }; then
  report_missing "the tests need these, which are missing:"
  exit 1
fi

installed=${packages[*]}
started=${starts[*]}
if [ ${#packages[@]} -gt 0 ]; then
  echo "ensure-services: installing ${packages[*]} with apt-get"
  # Waits for another apt-get holding the lock instead of failing at once.
  apt_options=(-qq -o DPkg::Lock::Timeout=300)
  DEBIAN_FRONTEND=noninteractive apt-get "${apt_options[@]}" update || true
  DEBIAN_FRONTEND=noninteractive apt-get "${apt_options[@]}" install -y "${packages[@]}"
fi
for service in "${starts[@]}"; do "start_$service"; done
if port_open 5432 && command -v psql >/dev/null && ! database_exists; then
  psql -w -h 127.0.0.1 -U postgres -d postgres -qc "CREATE DATABASE test"
fi

# Whatever went wrong above, this says what is still missing.
survey
if [ ${#missing[@]} -gt 0 ]; then
  report_missing "still missing after installing and starting what it could:" 0
  exit 1
fi
echo "ensure-services: ready (installed: ${installed:-nothing}; started: ${started:-nothing})"
