#!/usr/bin/env bash
# A PostgreSQL service that survives the loss of its primary, on pg_auto_failover (Debian packages
# postgresql-15-auto-failover and pg-auto-failover-cli): a monitor, a primary and a synchronous
# standby. Each role runs in the foreground (as a systemd unit, deploy/systemd/pgaf-*.service, or a
# test runs it), creating its node on the first run and rejoining on the next ones:
#   deploy/auto-failover.sh monitor <dir> <port> [hostname]
#   deploy/auto-failover.sh node <dir> <port> <monitor URL> [hostname] [database]
#   deploy/auto-failover.sh role <port> [database] [role]   once, on the primary: the servers' role
#   deploy/auto-failover.sh uri <monitor dir>      the DATABASE_URL to give the servers (every node, read-write)
# <dir> holds the node's data directory (pgdata/) and pg_autoctl's configuration and state; its parent
# must exist and belong to postgres. The monitor's URL is
# postgres://autoctl_node[:password]@<hostname>:<port>/pg_auto_failover[?sslmode=…&sslrootcert=…].
# PostgreSQL listens on <hostname>'s address only (default 127.0.0.1), and a node is named after its
# hostname and port, so two nodes on one machine (two ports) or on two machines have names of their own.
#
# Settings (environment; docs/operations.md):
#   PGAF_AUTH        trust (default: one machine, a trial) or scram-sha-256 (machines apart). With
#                    scram the script writes pg_hba.conf itself: the formation's machines, the app
#                    servers, and postgres over the local socket, nothing else.
#   PGAF_NETWORK     scram: the formation's machines (CIDR, e.g. 10.0.0.0/24)
#   PGAF_APP_NETWORK scram: the app servers' addresses (CIDR; default PGAF_NETWORK)
#   PGAF_MONITOR_PASSWORD, PGAF_REPLICATION_PASSWORD   scram: autoctl_node's (set by `monitor`, given by
#                    `uri`) and the replication role's (set by the first node, used by every node)
#   PGAF_APP_PASSWORD  scram: the servers' role's password (`role`)
#   PGAF_SSL_CA, PGAF_SSL_CERT, PGAF_SSL_KEY   TLS: the CA that signed every node's certificate, this
#                    machine's certificate (its address or name in subjectAltName) and key, readable by
#                    postgres. Connections then require TLS and check the server (sslmode=verify-full).
# The timeouts below have writes back within ~20 s of the primary's loss (17–19 s measured,
# bench/README.md; pg_auto_failover's defaults take ~30 s): the monitor gives a lost primary 10 s to
# drain before promoting, and a primary cut off from the monitor and its standby demotes itself after
# 5 s, before that promotion.
set -euo pipefail
usage() {
  sed -n '2,31p' "$0" >&2
  exit 2
}
fail() {
  echo "deploy/auto-failover.sh: $*" >&2
  exit 1
}
if [ "$(id -u)" = 0 ]; then
  # runuser keeps the environment, and with it the PGAF_ settings.
  exec runuser -u postgres -- "$0" "$@"
fi
role=${1:-}
[ -n "$role" ] || usage
auth=${PGAF_AUTH:-trust}
case $auth in
  trust | scram-sha-256) ;;
  *) fail "PGAF_AUTH must be trust or scram-sha-256, not $auth" ;;
esac
scram() { [ "$auth" = scram-sha-256 ]; }
needs() {
  local setting
  for setting in "$@"; do [ -n "${!setting:-}" ] || fail "$setting must be set with PGAF_AUTH=scram-sha-256 (see the header of this script)"; done
}
host=host sslmode=disable
if [ -n "${PGAF_SSL_CA:-}${PGAF_SSL_CERT:-}${PGAF_SSL_KEY:-}" ]; then
  for file in "${PGAF_SSL_CA:-}" "${PGAF_SSL_CERT:-}" "${PGAF_SSL_KEY:-}"; do
    [ -r "$file" ] || fail "TLS needs PGAF_SSL_CA, PGAF_SSL_CERT and PGAF_SSL_KEY, each a file $(id -un) can read ('$file' is not)"
  done
  tls=(--ssl-ca-file "$PGAF_SSL_CA" --server-cert "$PGAF_SSL_CERT" --server-key "$PGAF_SSL_KEY" --ssl-mode verify-full)
  host=hostssl sslmode=verify-full
else
  tls=(--no-ssl)
fi
# pg_autoctl's own rules (--auth trust), or the script's (scram: --skip-pg-hba, then pg_hba.conf written).
access=(--auth trust)
scram && access=(--skip-pg-hba)

# `text` as an SQL string literal.
literal() {
  local quoted=${1//\'/\'\'}
  printf "'%s'" "$quoted"
}
# A single-user session of a stopped node's PostgreSQL runs `statement` (a password set before anyone connects).
single() {
  local pgdata=$1 database=$2 statement=$3
  printf '%s\n' "$statement" | postgres --single -D "$pgdata" "$database" >/dev/null
}
# `pg_hba.conf` and `pg_ident.conf` of a scram node: postgres (and pg_autoctl, as postgres, for its
# roles) over the local socket; `rules` from the network, nothing else.
write_access() {
  local pgdata=$1 roles=$2 rules=$3 name
  printf 'local all all peer map=pgaf\n%s\n' "$rules" >"$pgdata/pg_hba.conf"
  : >"$pgdata/pg_ident.conf"
  for name in postgres $roles; do printf 'pgaf postgres %s\n' "$name" >>"$pgdata/pg_ident.conf"; done
}

if [ "$role" = role ]; then
  # The role the servers connect as (default rhizome), owner of the database: PostgreSQL 15 lets only
  # the database's owner create in schema public ("permission denied for schema public"), and the
  # job queue creates a schema of its own. pg_monitor lets /health/ready read whether the standby is
  # synchronous (pg_stat_replication's sync_state is hidden from other roles). Replication carries it
  # to the standby. Run on the primary's machine: it connects over the local socket.
  port=${2:-} database=${3:-rhizome} name=${4:-rhizome}
  [ -n "$port" ] || usage
  scram && needs PGAF_APP_PASSWORD
  exec psql -X -q -v ON_ERROR_STOP=1 -v name="$name" -v password="${PGAF_APP_PASSWORD:-}" -p "$port" -d "$database" <<'SQL'
select format('create role %I login', :'name') where not exists (select from pg_roles where rolname = :'name') \gexec
select format('alter role %I password %L', :'name', :'password') where :'password' <> '' \gexec
select format('alter database %I owner to %I', current_database(), :'name') \gexec
select format('grant pg_monitor to %I', :'name') \gexec
SQL
fi

dir=${2:-}
[ -n "$dir" ] || usage
bindir=$(pg_config --bindir)
export PATH="$bindir:$PATH" XDG_CONFIG_HOME="$dir/config" XDG_DATA_HOME="$dir/state"
pgdata="$dir/pgdata"
if [ "$role" != uri ]; then
  mkdir -p "$dir" 2>/dev/null && chmod 700 "$dir" 2>/dev/null && [ -w "$dir" ] ||
    fail "cannot make $dir as $(id -un): create its parent and give it to $(id -un) (mkdir -p $(dirname "$dir") && chown $(id -un) $(dirname "$dir"))"
fi

case $role in
  monitor)
    port=${3:-} hostname=${4:-127.0.0.1}
    [ -n "$port" ] || usage
    scram && needs PGAF_NETWORK PGAF_MONITOR_PASSWORD
    if [ ! -f "$pgdata/PG_VERSION" ]; then
      pg_autoctl create monitor --pgdata "$pgdata" --pgport "$port" --hostname "$hostname" --listen "$hostname" "${access[@]}" "${tls[@]}"
      {
        echo "pgautofailover.primary_demote_timeout = '10s'"
        echo "pgautofailover.node_considered_unhealthy_timeout = '5s'"
        echo "pgautofailover.health_check_period = '2s'"
      } >>"$pgdata/postgresql.conf"
      if scram; then
        write_access "$pgdata" autoctl_node "$host pg_auto_failover autoctl_node $PGAF_NETWORK scram-sha-256"
        single "$pgdata" pg_auto_failover "alter role autoctl_node password $(literal "$PGAF_MONITOR_PASSWORD");"
      fi
    fi
    exec pg_autoctl run --pgdata "$pgdata"
    ;;
  node)
    port=${3:-} monitor=${4:-} hostname=${5:-127.0.0.1} database=${6:-rhizome}
    [ -n "$port" ] && [ -n "$monitor" ] || usage
    scram && needs PGAF_NETWORK PGAF_REPLICATION_PASSWORD
    if [ ! -f "$XDG_CONFIG_HOME/pg_autoctl$pgdata/pg_autoctl.cfg" ]; then
      # Without TLS, libpq's default "prefer" would have pg_autoctl ask each node for TLS first.
      [ "$sslmode" != disable ] || monitor="$monitor$([[ $monitor == *\?* ]] && echo '&' || echo '?')sslmode=disable"
      # A standby's base backup connects to the primary as the replication role, with its password.
      PGPASSWORD=${PGAF_REPLICATION_PASSWORD:-} pg_autoctl create postgres --pgdata "$pgdata" --pgport "$port" --hostname "$hostname" --listen "$hostname" \
        "${access[@]}" "${tls[@]}" --monitor "$monitor" --dbname "$database" --name "node-${hostname//[^A-Za-z0-9]/-}-$port"
      pg_autoctl config set --pgdata "$pgdata" timeout.network_partition_timeout 5
      if scram; then
        pg_autoctl config set --pgdata "$pgdata" replication.password "$PGAF_REPLICATION_PASSWORD" >/dev/null
        write_access "$pgdata" "pgautofailover_replicator pgautofailover_monitor" "$(
          printf '%s replication pgautofailover_replicator %s scram-sha-256\n' "$host" "$PGAF_NETWORK"
          printf '%s all pgautofailover_replicator %s scram-sha-256\n' "$host" "$PGAF_NETWORK"
          printf '%s all pgautofailover_monitor %s scram-sha-256\n' "$host" "$PGAF_NETWORK"
          printf '%s %s all %s scram-sha-256' "$host" "$database" "${PGAF_APP_NETWORK:-$PGAF_NETWORK}"
        )"
        # The first node (not a standby, whose data and roles come from the primary) sets the password
        # the standbys replicate with.
        if [ ! -f "$pgdata/standby.signal" ]; then
          single "$pgdata" postgres "alter role pgautofailover_replicator password $(literal "$PGAF_REPLICATION_PASSWORD");"
        fi
      fi
    fi
    exec pg_autoctl run --pgdata "$pgdata"
    ;;
  uri)
    # The nodes' URL as the monitor knows them; without TLS, libpq's "prefer" would make node-postgres insist on it.
    uri=$(PGPASSWORD=${PGAF_MONITOR_PASSWORD:-} pg_autoctl show uri --pgdata "$pgdata" --formation default)
    if [ "$sslmode" = disable ]; then echo "${uri//sslmode=prefer/sslmode=disable}"; else echo "$uri"; fi
    ;;
  *) usage ;;
esac
