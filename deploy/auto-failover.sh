#!/usr/bin/env bash
# A PostgreSQL service that survives the loss of its primary, on pg_auto_failover (Debian packages
# postgresql-15-auto-failover and pg-auto-failover-cli): a monitor, a primary and a synchronous
# standby. Each role runs in the foreground (as a systemd unit or a test runs it), creating its node on
# the first run and rejoining on the next ones:
#   deploy/auto-failover.sh monitor <dir> <port> [hostname]
#   deploy/auto-failover.sh node <dir> <port> <monitor URL> [hostname] [database]
#   deploy/auto-failover.sh uri <monitor dir>      the DATABASE_URL to give the servers (every node, read-write)
#   deploy/auto-failover.sh role <port> [hostname] [database] [role]   once, on the primary: the servers' role
# <dir> holds the node's data directory (pgdata/) and pg_autoctl's configuration and state. The
# monitor's URL is postgres://autoctl_node@<hostname>:<port>/pg_auto_failover. PostgreSQL listens on
# <hostname>'s address only (127.0.0.1: loopback), and a node is named after its hostname and port,
# so two nodes on one machine (two ports) or on two machines (one port) have names of their own.
# Authentication is `trust` on these loopback examples; on separate machines use scram and TLS
# (docs/operations.md). Run each role under a supervisor (a systemd unit with Restart=always).
# The timeouts below have writes back within ~20 s of the primary's loss (17–19 s measured,
# bench/README.md; pg_auto_failover's defaults take ~30 s): the monitor gives a lost primary 10 s to
# drain before promoting, and a primary cut off from the monitor and its standby demotes itself after
# 5 s, before that promotion.
set -euo pipefail
if [ "$(id -u)" = 0 ]; then
  exec runuser -u postgres -- "$0" "$@"
fi
role=${1:-} dir=${2:-}
if [ -z "$role" ] || [ -z "$dir" ]; then
  sed -n '2,15p' "$0" >&2
  exit 2
fi
if [ "$role" = role ]; then
  # The role the servers connect as (default rhizome), owner of the database: PostgreSQL 15 lets only
  # the database's owner create in schema public ("permission denied for schema public"), and the
  # job queue creates a schema of its own. pg_monitor lets /health/ready read whether the standby is
  # synchronous (pg_stat_replication's sync_state is hidden from other roles). Replication carries it
  # to the standby.
  port=$2 hostname=${3:-127.0.0.1} database=${4:-rhizome} name=${5:-rhizome}
  exec psql -X -q -v ON_ERROR_STOP=1 -v name="$name" -h "$hostname" -p "$port" -U postgres -d "$database" <<'SQL'
select format('create role %I login', :'name') where not exists (select from pg_roles where rolname = :'name') \gexec
select format('alter database %I owner to %I', current_database(), :'name') \gexec
select format('grant pg_monitor to %I', :'name') \gexec
SQL
fi
bindir=$(pg_config --bindir)
export PATH="$bindir:$PATH" XDG_CONFIG_HOME="$dir/config" XDG_DATA_HOME="$dir/state"
pgdata="$dir/pgdata"
mkdir -p "$dir" && chmod 700 "$dir"

case $role in
  monitor)
    port=$3 hostname=${4:-127.0.0.1}
    if [ ! -f "$pgdata/PG_VERSION" ]; then
      pg_autoctl create monitor --pgdata "$pgdata" --pgport "$port" --hostname "$hostname" --listen "$hostname" --auth trust --no-ssl
      {
        echo "pgautofailover.primary_demote_timeout = '10s'"
        echo "pgautofailover.node_considered_unhealthy_timeout = '5s'"
        echo "pgautofailover.health_check_period = '2s'"
      } >>"$pgdata/postgresql.conf"
    fi
    exec pg_autoctl run --pgdata "$pgdata"
    ;;
  node)
    port=$3 monitor=$4 hostname=${5:-127.0.0.1} database=${6:-rhizome}
    if [ ! -f "$XDG_CONFIG_HOME/pg_autoctl$pgdata/pg_autoctl.cfg" ]; then
      pg_autoctl create postgres --pgdata "$pgdata" --pgport "$port" --hostname "$hostname" --listen "$hostname" --auth trust --no-ssl \
        --monitor "$monitor?sslmode=disable" --dbname "$database" --name "node-${hostname//[^A-Za-z0-9]/-}-$port"
      pg_autoctl config set --pgdata "$pgdata" timeout.network_partition_timeout 5
    fi
    exec pg_autoctl run --pgdata "$pgdata"
    ;;
  uri)
    # The nodes take no TLS on these examples: libpq's "prefer" would make node-postgres insist on it.
    pg_autoctl show uri --pgdata "$pgdata" --formation default | sed 's/sslmode=prefer/sslmode=disable/'
    ;;
  *)
    sed -n '2,15p' "$0" >&2
    exit 2
    ;;
esac
