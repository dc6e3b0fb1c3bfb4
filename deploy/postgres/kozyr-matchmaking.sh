#!/bin/sh
# Matchmaking's own database and user (docs/operations.md, "Databases"): the role
# kozyr_matchmaking (password $KOZYR_MATCHMAKING_DB_PASSWORD) owns the database
# kozyr_matchmaking, and may not connect to $POSTGRES_DB, the table service's (raw
# events, hidden cards). The postgres image runs it from /docker-entrypoint-initdb.d at
# its first start (docker-compose.yml, the k8s dev overlay, which holds a copy); on a
# server that already has its data, run it once by hand, e.g.
#   docker compose exec postgres sh /docker-entrypoint-initdb.d/20-kozyr-matchmaking.sh
# Safe to repeat. tests/integration/infra/test_matchmaking_database_script.py runs it.
set -eu
: "${KOZYR_MATCHMAKING_DB_PASSWORD:?the password of the kozyr_matchmaking role}"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
    -v password="$KOZYR_MATCHMAKING_DB_PASSWORD" -v table_db="$POSTGRES_DB" <<'SQL'
SELECT format('CREATE ROLE kozyr_matchmaking LOGIN PASSWORD %L', :'password')
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'kozyr_matchmaking') \gexec
SELECT 'CREATE DATABASE kozyr_matchmaking OWNER kozyr_matchmaking'
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'kozyr_matchmaking') \gexec
REVOKE CONNECT ON DATABASE kozyr_matchmaking FROM PUBLIC;
REVOKE CONNECT ON DATABASE :"table_db" FROM PUBLIC;
SQL
