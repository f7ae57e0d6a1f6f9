#!/usr/bin/env bash
# bench10m.sh: the library and identityd at 10,000,000 users.
#
# The first run builds the 10,000,000-user bbolt file through ImportUsers
# with one precomputed argon2id hash (bench_test.go's users: usernames
# user0000001..., varied names and emails, three attributes each, five
# claim mappers) in DIR, which keeps it for every later run; building
# takes several minutes and about 6 GiB of disk. Each run then:
#
#  1. runs the benchmarks of the 10M table at 10,000 and 10,000,000 users
#     (GetUser, Attributes, Claims, searches by 1, 2, 3 characters, a
#     longer prefix and an exact username with their totals, deep offsets,
#     lookups by attribute value), the file's size on disk in the log;
#  2. serves the file with identityd and runs scripts/floor.sh against it
#     (GET user, GET attributes, a search, each beside the net/http floor),
#     which prints identityd's resident memory after the runs.
#
# Usage: scripts/bench10m.sh
# Environment (defaults): DIR (/var/tmp/identity-bench10m), BENCHTIME
# (2s), COUNT (2), FLOOR (true: step 2), and floor.sh's DURATION, ROUNDS,
# THREADS, CONNECTIONS (the database and USERS are set here).
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=${DIR:-/var/tmp/identity-bench10m}
BENCHTIME=${BENCHTIME:-2s}
COUNT=${COUNT:-2}
FLOOR=${FLOOR:-true}
N=10000000
FILE=$DIR/users-v3-$N.db

mkdir -p "$DIR"
[ -f "$FILE" ] || echo "== building $FILE (once; several minutes)" >&2
go test -run '^$' -timeout 3h -benchtime "$BENCHTIME" -count "$COUNT" \
  -bench 'BenchmarkGetUser$|BenchmarkAttributes$|BenchmarkClaims$|SearchPrefixes|SearchDeepOffset|ListUsersDeepOffset|FindUsers' \
  . -bench.users 10000,$N -bench.dir "$DIR"
echo "file: $FILE, $(du -m "$FILE" | cut -f1) MiB on disk"

if [ "$FLOOR" = true ]; then
  DB=$FILE USERS=$N SEARCH=${SEARCH:-k} scripts/floor.sh
fi
