#!/usr/bin/env bash
# Makes a PostgreSQL streaming replica of a running primary: a base backup with the replication
# settings written in (pg_basebackup -R), ready to start with pg_ctl. PostgreSQL's own tools only.
#   deploy/make-replica.sh <primary connection URL> <new data directory> [port]
# The primary must accept replication connections from here (pg_hba.conf `replication` lines;
# wal_level replica, the default). The replica then follows the primary by itself; give its URL to the
# servers in DATABASE_READ_URL. Run it as the user PostgreSQL runs as (as root, it re-runs itself as
# `postgres`).
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 <primary URL> <data directory> [port]" >&2
  exit 2
fi
if [ "$(id -u)" = 0 ]; then
  exec runuser -u postgres -- "$0" "$@"
fi
primary=$1 dir=$2 port=${3:-5433}
bindir=$(pg_config --bindir)
"$bindir/pg_basebackup" --dbname="$primary" --pgdata="$dir" --write-recovery-conf --wal-method=stream --checkpoint=fast
chmod 700 "$dir"
# Its own port; the rest of postgresql.conf is the primary's.
echo "port = $port" >> "$dir/postgresql.auto.conf"
echo "replica ready in $dir: start it with  $bindir/pg_ctl -D $dir -l $dir/log start"
