#!/usr/bin/env bash
# console_test.sh BOARDKEEPER WORKDIR: the CTest test console.browser. Seeds a board with
# archived, spilled and hostile members (add, tick), starts serve with a token, checks the
# console's headers and serve.console: false with curl, then drives the console in Debian's
# headless chromium (console_test.js, over the DevTools pipe) and keeps its screenshots in
# WORKDIR/artifacts. Exit 77 (skipped, with a line saying why) where chromium cannot start or
# the servers are not given; needs BK_TEST_REDIS_URL and BK_TEST_POSTGRES_URL.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
binary=$(realpath "${1:?usage: console_test.sh BOARDKEEPER WORKDIR}")
work=${2:?usage: console_test.sh BOARDKEEPER WORKDIR}
skip() {
  echo "SKIPPED console.browser: $*"
  exit 77
}
[ -n "${BK_TEST_REDIS_URL:-}" ] || skip "BK_TEST_REDIS_URL is not set (tests/run.sh starts Redis)"
[ -n "${BK_TEST_POSTGRES_URL:-}" ] || skip "BK_TEST_POSTGRES_URL is not set (tests/run.sh starts PostgreSQL)"
command -v node >/dev/null || skip "node is missing (apt-get install nodejs)"
chromium=${BK_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$chromium" ] || skip "chromium is missing (tests/run.sh installs Debian's chromium)"

started=$(date +%s)
rm -rf "$work"
mkdir -p "$work/artifacts"
run=$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n')
prefix="console_$run"
schema="console_$run"
token="console-token-$run"
hostile='<img src=x onerror=alert(1)>'
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  psql "$BK_TEST_POSTGRES_URL" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
}
trap cleanup EXIT

write_config() { # write_config FILE CONSOLE(true|false)
  cat >"$1" <<EOF
redis:
  url: $BK_TEST_REDIS_URL
  key_prefix: $prefix
postgres:
  url: $BK_TEST_POSTGRES_URL
  schema: $schema
boards:
  - name: arena
    periods: [daily]
    timezone: America/New_York
    order: desc
    tie_break: earliest
    update: increment
    max_points: 1000000
    hot_keep: 5
    display: 5
    archive: {grace: 10m}
    retention: {daily: 30d}
    tiers: [{name: gold, top: 3}, {name: silver, top: "50%"}]
  - name: ligue # a league: the member page shows the member's cohort with zones
    periods: [daily]
    max_points: 1000
    retention: {daily: 30d}
    league: {divisions: [low, high], cohort_size: 3, promote: 1, relegate: 1}
  - name: quiet # named, never written: the start page lists it as not in Redis
    periods: [weekly]
    max_points: 100
    retention: {weekly: 30d}
serve:
  console: $2
EOF
}
write_config "$work/on.yaml" true
write_config "$work/off.yaml" false
bk() { "$binary" --config "$work/on.yaml" "$@"; }

# --- The board: two archived days, and today with 28 members of which 23 spilled ---------
bk migrate >/dev/null
add_day() { # add_day DAY COUNT
  local day=$1 n=$2 i
  for ((i = 1; i <= n; i++)); do
    local m
    m=$(printf 'player%02d' "$i")
    # player02 and player03 share their points: the earlier (tie_break: earliest) ranks higher.
    local points=$((1000 - i * 7 + (i == 3 ? 7 : 0)))
    bk --now "${day}T16:00:00Z" add arena "$m" "$points" --at "${day}T15:$(printf '%02d' "$i"):00Z" \
      --name "Player $i" --meta "{\"team\":\"t$((i % 3))\",\"level\":$i}" >/dev/null
  done
  # Between player05 and player06: on the first page, and the first spilled member today.
  bk --now "${day}T16:00:00Z" add arena "$hostile" 960 --at "${day}T15:59:00Z" \
    --name "$hostile" --meta '{"note":"<script>alert(2)</script>"}' >/dev/null
}
# Days of last week: Redis's own clock sets the keys' TTLs, so the days must be recent.
day1=$(date -u -d '-7 days' +%F)
day2=$(date -u -d '-6 days' +%F)
today=$(date -u -d '-5 days' +%F) # "today" for the tick and serve (--now)
add_day "$day1" 8
add_day "$day2" 10
add_day "$today" 27
# Four racers on the league (seated by the tick below, in this order: low-1 holds three).
for i in 1 2 3 4; do
  bk --now "${today}T16:00:00Z" add ligue "racer$i" $((i * 10)) --at "${today}T15:0$i:00Z" >/dev/null
done
bk --now "${today}T20:00:00Z" tick --json >"$work/tick.json"
# What the CLI counts, hot and cold, for the page's counts to be checked against.
bk --now "${today}T21:00:00Z" periods arena --json >"$work/periods.json"

# --- serve, with a token; and one with the console turned off -----------------------------
start_serve() { # start_serve CONFIG LOG VARIABLE: sets VARIABLE to the address it listens on
  BOARDKEEPER_SERVE_TOKENS=$token "$binary" --config "$1" --now "${today}T21:00:00Z" \
    serve --listen 127.0.0.1:0 --workers 4 >/dev/null 2>"$2" &
  pids+=($!)
  local i addr
  for ((i = 0; i < 600; i++)); do
    addr=$(grep -o 'listening on http://[0-9.:]*' "$2" | head -1 | sed 's|.*http://||' || true)
    if [ -n "$addr" ]; then
      printf -v "$3" '%s' "$addr"
      return 0
    fi
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  echo "serve did not start: $(cat "$2")" >&2
  return 1
}
start_serve "$work/on.yaml" "$work/serve-on.log" on
start_serve "$work/off.yaml" "$work/serve-off.log" off

fail() {
  echo "FAIL console.browser: $*" >&2
  exit 1
}
headers=$(curl -sS -D - -o /dev/null "http://$on/console/")
grep -qi "^content-security-policy: default-src 'none'; script-src 'self'" <<<"$headers" ||
  fail "GET /console/ lacks the strict Content-Security-Policy: $headers"
grep -qi '^content-type: text/html' <<<"$headers" || fail "GET /console/ is not text/html: $headers"
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST -d x "http://$on/console/")
[ "$code" = 405 ] || fail "POST /console/ answered $code, not 405 (the console is read-only)"
code=$(curl -sS -o /dev/null -w '%{http_code}' "http://$off/console/")
[ "$code" = 404 ] || fail "with serve.console: false, GET /console/ answered $code, not 404"
code=$(curl -sS -o /dev/null -w '%{http_code}' "http://$off/console/console.js")
[ "$code" = 404 ] || fail "with serve.console: false, GET /console/console.js answered $code, not 404"
echo "ok: CSP and content type on /console/, POST is 405, serve.console: false gives 404"

# --- The browser ---------------------------------------------------------------------------
set +e
node "$here/console_test.js" --chromium "$chromium" --url "http://$on" --token "$token" \
  --board arena --hostile "$hostile" --out "$work/artifacts" --cli-periods "$work/periods.json"
status=$?
set -e
echo "console.browser took $(($(date +%s) - started)) s (seeding, two serves, chromium)"
exit "$status"
