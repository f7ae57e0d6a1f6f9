#!/usr/bin/env bash
# loadtest.sh: the over-loopback benchmark of identityd serve.
#
# It builds identityd, creates a database in a temporary directory with the
# workspace "bench" and a users:read key, imports USERS users (JSON Lines,
# all sharing one precomputed argon2id hash, so the import measures the
# store rather than hashing), starts `identityd serve` on loopback, and runs
# wrk against two cases:
#
#   GET /t/bench/api/v1/users/{id}                       id random in 1..USERS
#   GET /t/bench/api/v1/users?search=user000123&limit=20 indexed prefix search
#
# It prints requests/s and the p50 and p99 latencies of each case, then
# stops the server and removes the temporary directory. Everything listens
# on 127.0.0.1 only, and every step is bounded in time.
#
# Usage: scripts/loadtest.sh
# Environment (defaults): USERS (100000), DURATION (15s, in seconds), THREADS (2),
# CONNECTIONS (32), PORT (0: a free port), ACCESS_LOG (true: identityd
# logs each request, to a file, as it does by default).
#
# wrk is installed from Debian's packages when missing (needs root).
set -euo pipefail
cd "$(dirname "$0")/.."

USERS=${USERS:-100000}
DURATION=${DURATION:-15s}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
PORT=${PORT:-0}
ACCESS_LOG=${ACCESS_LOG:-true}
# A valid argon2id PHC string (m=19 MiB, t=2, p=1) that every user shares.
HASH='$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$4mELq7hNUzGZvyZXLgouEc8/BWwYXjaTIDhSdkbPjyo'

log() { printf '== %s\n' "$*" >&2; }
die() { printf 'loadtest: %s\n' "$*" >&2; exit 1; }

# shellcheck source=ensure_wrk.sh
. scripts/ensure_wrk.sh

WORK=$(mktemp -d "${TMPDIR:-/tmp}/identityd-loadtest.XXXXXX")
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    # identityd exits within its 5 s shutdown deadline; wait a little more.
    for _ in $(seq 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ensure_wrk
# Other work on the machine skews the figures; the summary shows it.
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
BIN=$WORK/identityd
DB=$WORK/identity.db
log "go build ./examples/identityd"
timeout 300 go build -o "$BIN" ./examples/identityd

log "workspace, key, $USERS users"
"$BIN" -db "$DB" workspace create bench >/dev/null
KEY=$("$BIN" -db "$DB" key create -workspace bench -scopes users:read -name loadtest)
awk -v n="$USERS" -v hash="$HASH" 'BEGIN {
  for (i = 1; i <= n; i++)
    printf "{\"username\":\"user%06d\",\"email\":\"user%06d@example.com\",\"fullName\":\"User %06d\",\"passwordHash\":\"%s\",\"emailVerified\":true}\n", i, i, i, hash
}' >"$WORK/users.jsonl"
start_ms=$(( $(date +%s%N) / 1000000 ))
timeout 120 "$BIN" -db "$DB" user import -workspace bench -file "$WORK/users.jsonl" >&2
import_ms=$(( $(date +%s%N) / 1000000 - start_ms ))

log "identityd serve"
"$BIN" -db "$DB" serve -addr "127.0.0.1:$PORT" -access-log="$ACCESS_LOG" 2>"$WORK/server.log" &
SERVER_PID=$!
ADDR=
for _ in $(seq 100); do # up to 10 s
  ADDR=$(sed -n 's/.*msg=listening addr=\([^ ]*\).*/\1/p' "$WORK/server.log" | head -n1)
  [ -n "$ADDR" ] && curl -fsS -m 2 "http://$ADDR/healthz" >/dev/null 2>&1 && break
  kill -0 "$SERVER_PID" 2>/dev/null || die "identityd exited: $(cat "$WORK/server.log")"
  ADDR=
  sleep 0.1
done
[ -n "$ADDR" ] || die "identityd did not answer within 10 s: $(cat "$WORK/server.log")"
BASE=http://$ADDR

# Each wrk thread has its own Lua state; seed each differently.
cat >"$WORK/random-user.lua" <<EOF
local n = $USERS
local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("seed", counter)
end
function init(args)
  math.randomseed(os.time() * 1000 + (seed or 0))
end
function request()
  return wrk.format("GET", "/t/bench/api/v1/users/" .. math.random(1, n))
end
EOF

SEARCH_PATH='/t/bench/api/v1/users?search=user000123&limit=20'
# One request of each case must succeed before the figures mean anything.
for path in /t/bench/api/v1/users/1 "$SEARCH_PATH"; do
  code=$(curl -sS -m 5 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $KEY" "$BASE$path")
  [ "$code" = 200 ] || die "GET $path answered $code"
done

# bench NAME WRK-ARGS... runs wrk and prints one line of figures.
bench() {
  local name=$1; shift
  local out=$WORK/wrk-$name.txt secs=${DURATION%s}
  log "wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency $* ($name)"
  timeout $((secs + 30)) wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency \
    -H "Authorization: Bearer $KEY" "$@" >"$out"
  awk -v name="$name" '
    /Requests\/sec:/ { rps = $2 }
    /^ +50%/ { p50 = $2 }
    /^ +99%/ { p99 = $2 }
    /Non-2xx or 3xx responses:/ { bad = $NF }
    / requests in / { total = $1 }
    END { printf "%-14s %12s %10s %10s %10s %8s\n", name, rps, p50, p99, total, (bad == "" ? 0 : bad) }
  ' "$out"
}

results=$(
  bench get-by-id -s "$WORK/random-user.lua" "$BASE/t/bench/api/v1/users/1"
  bench search "$BASE$SEARCH_PATH"
)

echo
echo "identityd over loopback: $USERS users, wrk -t$THREADS -c$CONNECTIONS -d$DURATION, access log $ACCESS_LOG"
echo "machine: $(nproc) CPUs, $(go version | cut -d' ' -f3-), $(wrk --version 2>&1 | head -n1 | cut -d' ' -f1-2), load average before: $LOAD_BEFORE"
printf 'import of %s users: %d.%03d s\n\n' "$USERS" $((import_ms / 1000)) $((import_ms % 1000))
printf "%-14s %12s %10s %10s %10s %8s\n" case "requests/s" p50 p99 requests non-2xx
echo "$results"
echo
echo "get-by-id: GET /t/bench/api/v1/users/{id}, id random in 1..$USERS"
echo "search:    GET $SEARCH_PATH"
