#!/bin/sh
# Temporal's schemas on Postgres (runs in temporalio/admin-tools; SQL_* come from the environment):
# create each database, set its schema up on the first run, upgrade it to the image's version.
set -eu
SCHEMA=/etc/temporal/schema/postgresql/v12

setup() {
  db=$1
  dir=$2
  temporal-sql-tool --db "$db" create-database 2>/dev/null || echo "database $db exists"
  # setup-schema -v 0.0 makes the version table of a fresh database; on one that has it, it
  # fails and update-schema below does the work.
  temporal-sql-tool --db "$db" setup-schema -v 0.0 2>/dev/null || echo "schema of $db exists"
  temporal-sql-tool --db "$db" update-schema -d "$SCHEMA/$dir/versioned"
}

setup temporal temporal
setup temporal_visibility visibility
echo "temporal schemas up to date"
