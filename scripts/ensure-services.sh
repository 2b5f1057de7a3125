#!/usr/bin/env bash
# Makes sure PostgreSQL, Redis and RabbitMQ answer on their standard localhost ports, as the
# integration and end-to-end tests need: start them when installed but stopped, install them from
# Debian's packages when absent. Needs root (or sudo) on a fresh Debian machine.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() {
  local name=$1 port=$2
  for _ in $(seq 1 60); do port_open "$port" && return 0; sleep 1; done
  echo "ensure-services: $name did not open port $port within 60 s" >&2
  return 1
}

APT_UPDATED=""
apt_install() {
  if [ -z "$APT_UPDATED" ]; then $SUDO apt-get update -qq; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

ensure_postgres() {
  if ! port_open 5432; then
    if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
      echo "ensure-services: installing PostgreSQL"
      apt_install postgresql
      # Tests connect as postgres over loopback without a password, as on the CI machines.
      for hba in /etc/postgresql/*/main/pg_hba.conf; do
        $SUDO sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
        $SUDO sed -i -E 's/^(local\s+all\s+postgres\s+)\S+/\1trust/' "$hba"
      done
    fi
    echo "ensure-services: starting PostgreSQL"
    # restart, not start: the package may have started the cluster before pg_hba.conf was edited.
    $SUDO pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main restart || true
    wait_port PostgreSQL 5432
  fi
  if ! psql -h 127.0.0.1 -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname='test'" | grep -q 1; then
    psql -h 127.0.0.1 -U postgres -d postgres -qc 'CREATE DATABASE test'
  fi
}

ensure_redis() {
  port_open 6379 && return 0
  command -v redis-server >/dev/null || { echo "ensure-services: installing Redis"; apt_install redis-server; }
  echo "ensure-services: starting Redis"
  $SUDO mkdir -p /var/lib/redis /var/log/redis
  $SUDO redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/sightline-tests.log
  wait_port Redis 6379
}

ensure_rabbitmq() {
  port_open 5672 && return 0
  command -v rabbitmq-server >/dev/null || { echo "ensure-services: installing RabbitMQ"; apt_install rabbitmq-server; }
  echo "ensure-services: starting RabbitMQ"
  $SUDO rabbitmq-server -detached || true
  wait_port RabbitMQ 5672
  # The port opens before the broker accepts logins; wait for the app to be up.
  for _ in $(seq 1 60); do $SUDO rabbitmqctl -q await_startup >/dev/null 2>&1 && return 0; sleep 1; done
}

command -v psql >/dev/null || apt_install postgresql-client
ensure_postgres
ensure_redis
ensure_rabbitmq
echo "ensure-services: PostgreSQL :5432, Redis :6379 and RabbitMQ :5672 are reachable"
