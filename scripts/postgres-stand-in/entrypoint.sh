#!/bin/sh
# The official postgres image's entrypoint, in short: POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB
# make the cluster, its user and its database on first start; then PostgreSQL serves every address.
set -e
bin=/usr/lib/postgresql/15/bin
export PGDATA=/var/lib/postgresql/data
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  printf '%s\n' "$POSTGRES_PASSWORD" > /tmp/pw
  "$bin/initdb" -D "$PGDATA" -U "$POSTGRES_USER" --pwfile=/tmp/pw --auth=scram-sha-256 >/dev/null
  rm /tmp/pw
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  "$bin/pg_ctl" -D "$PGDATA" -w start -o "-c listen_addresses=''" >/dev/null
  PGPASSWORD="$POSTGRES_PASSWORD" "$bin/createdb" -U "$POSTGRES_USER" "$POSTGRES_DB"
  "$bin/pg_ctl" -D "$PGDATA" -w stop >/dev/null
fi
exec "$bin/postgres" -D "$PGDATA" -c listen_addresses='*'
