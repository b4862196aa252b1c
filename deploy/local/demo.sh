#!/usr/bin/env bash
# The main job against throwaway local servers: installs what is missing, builds, starts
# Redis and PostgreSQL on free loopback ports in a temp dir, plays a short simulated
# scenario with the real binary (--now moves the clock), prints the boards, and cleans up.
set -euo pipefail
BK_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=setup.sh
source "$BK_ROOT/deploy/local/setup.sh"
trap bk_cleanup EXIT

bk_install
build_dir=${BK_BUILD_DIR:-$BK_ROOT/build-demo}
bk_build "$build_dir" -DBK_TESTS=OFF
bk_start_redis
bk_start_postgres

# The story's dates follow the real calendar: Redis expires keys by its own clock, so a
# story in the past would have its keys expire at once. Sunday is the next Sunday whose
# Monday is in the same month; Friday is that week's.
sun=$(date -u -d "next sunday" +%F)
if [ "$(date -u -d "$sun + 1 day" +%m)" != "$(date -u -d "$sun" +%m)" ]; then
  sun=$(date -u -d "$sun + 7 days" +%F)
fi
mon=$(date -u -d "$sun + 1 day" +%F)
fri=$(date -u -d "$sun + 5 days" +%F)

cat >"$BK_TMP/demo.yaml" <<YAML
redis:
  url: $BK_TEST_REDIS_URL
  key_prefix: demo
postgres:
  url: $BK_TEST_POSTGRES_URL
boards:
  - name: points
    periods: [daily, weekly, monthly]
    timezone: Asia/Shanghai
    max_points: 1000000
    hot_keep: 4          # tiny, so the demo spills: members ranked 5th and below go to PostgreSQL
    display: 3
    retention: {daily: 2d, weekly: 8d, monthly: 32d}
  - name: "race:*"
    periods: [daily, {name: cup, cron: "0 18 * * 5"}]
    timezone: Europe/Berlin
    order: asc
    update: best
    time_resolution: s
    max_points: 3600000
    retention: {default: 3d, cup: 10d}
  - name: arena
    periods: [daily, monthly]
    timezone: UTC
    max_points: 1000000
    hot_keep: 10         # 30 players: the monthly board spills 20 of them after each day
    display: 5
    retention: {default: 40d}
YAML

bk() {
  printf '\n\033[36m$ boardkeeper %s\033[0m\n' "$*"
  "$build_dir/src/boardkeeper" --config "$BK_TMP/demo.yaml" "$@" || printf '\033[33m(exit %s)\033[0m\n' "$?"
}

bk check-config
bk migrate

bk_log "Sunday $sun in Shanghai: players score; bob and carol tie on 120"
now=${sun}T21:00:00+08:00
bk --now $now add points alice 100 --at ${sun}T09:00:00+08:00 --name "Alice L." --meta '{"team": "red"}'
bk --now $now add points bob 70 --at ${sun}T09:30:00+08:00
bk --now $now add points carol 120 --at ${sun}T10:00:00+08:00
bk --now $now add points bob 50 --at ${sun}T11:15:00+08:00 --id match-17
bk --now $now add points bob 50 --at ${sun}T11:15:00+08:00 --id match-17
bk --now $now add points dave 40 --at ${sun}T12:00:00+08:00
bk --now $now add points "eve 🏆" 95 --at ${sun}T20:00:00+08:00 --name "Eve the Champion"
bk --now $now top points daily
bk --now $now rank points daily bob
bk_log "Sunday's tick: hot_keep is 4, so dave (5th) is spilled to PostgreSQL in every period"
bk --now $now tick

bk_log "Monday: a new day and week; dave scores again and his monthly points come back from PostgreSQL"
now=${mon}T20:00:00+08:00
bk --now $now add points dave 200 --at ${mon}T08:00:00+08:00
bk --now $now add points alice 30 --at ${mon}T09:00:00+08:00
bk --now $now top points daily
bk --now $now top points monthly --json
bk --now $now around points monthly alice -k 1
bk --now $now top points daily --period-id $sun -n 3

bk_log "tick: the hot buffer keeps 4 members per period; the rest are spilled to PostgreSQL"
bk --now $now tick --dry-run
bk --now $now tick
psql -X "$BK_TEST_POSTGRES_URL" -c "SELECT period, period_id, member, points, achieved_at
  FROM boardkeeper.cold_members ORDER BY period, period_id, encoded, member"
bk --now $now rank points monthly "eve 🏆"
bk_log "Sunday's day and week were past their grace, so that tick archived them: history in SQL"
bk --now $now history points daily "$sun"
psql -X "$BK_TEST_POSTGRES_URL" -c "SELECT period, period_id, rank, member, points, achieved_at, name, metadata
  FROM boardkeeper.history WHERE board = 'points' ORDER BY period, period_id, rank, member"
psql -X "$BK_TEST_POSTGRES_URL" -c "SELECT period, period_id, status, members, hot_members, cold_members
  FROM boardkeeper.periods ORDER BY period, period_id"
bk_log "eve scores again: her cold points come back (rehydrated) plus the new ones"
bk --now $now add points "eve 🏆" 150 --at ${mon}T19:00:00+08:00
bk --now $now top points monthly -n 10

bk_log "Refusals: a late event for Sunday (closed after its 10m grace), points out of range"
bk --now $now add points carol 10 --at ${sun}T23:59:00+08:00
bk --now $now add points carol 2000000

bk_log "A race board (lower is better, best time kept) with a weekly cup resetting Friday 18:00 Berlin"
now=${fri}T19:00:00+01:00
bk --now $now add race:monaco lena 83512 --at ${fri}T18:05:00+01:00
bk --now $now add race:monaco max 82977 --at ${fri}T18:20:00+01:00
bk --now $now add race:monaco lena 82001 --at ${fri}T18:40:00+01:00
bk --now $now add race:monaco max 83999 --at ${fri}T18:50:00+01:00
bk --now $now top race:monaco cup
bk --now $now periods race:monaco
bk --now $now periods points

bk_log "A simulated month of the 'arena' board: 30 players send events to the stream every day;
   each day ingest applies them and the next morning's tick archives the day and spills the
   month beyond its hot 10 (so players who score again are rehydrated). One line per tick:"
month=$(date -u -d "$(date -u +%Y-%m-01) + 1 month" +%Y-%m)
days=$(date -u -d "$month-01 + 1 month - 1 day" +%d)
metrics="$BK_TMP/tick.prom"
bkq() { "$build_dir/src/boardkeeper" --config "$BK_TMP/demo.yaml" "$@"; }
fetch() { python3 -c "import sys, urllib.request as u; print(u.urlopen(sys.argv[1]).read().decode())" "$1"; }
events_of_day() {
  awk -v day="$1" -v seed="$1" 'BEGIN { srand(substr(seed, 9) + 0); for (i = 0; i < 240; i++) {
      p = sprintf("p%02d", 1 + int(rand() * rand() * 30));
      printf "XADD demo:events * board arena member %s value %d at %sT%02d:%02d:00Z\n",
             p, 1 + int(rand() * 50), day, 8 + int(i / 20), (i * 7) % 60 } }'
}
for d in $(seq -w 1 "$days"); do
  day=$month-$d
  if [ "$d" != "$days" ]; then
    events_of_day "$day" | redis-cli -p "$BK_REDIS_PORT" >/dev/null
    bkq --now "${day}T23:30:00Z" ingest --drain >/dev/null 2>&1
  else
    bk_log "Day $days: ingest runs as a service this time (--listen), serving /metrics, /healthz, /readyz"
    port=$(bk_free_port)
    "$build_dir/src/boardkeeper" --config "$BK_TMP/demo.yaml" --now "${day}T23:30:00Z" \
      ingest --listen "127.0.0.1:$port" >/dev/null 2>&1 &
    ingest_pid=$!
    events_of_day "$day" | redis-cli -p "$BK_REDIS_PORT" >/dev/null
    for _ in $(seq 1 100); do
      fetch "http://127.0.0.1:$port/metrics" 2>/dev/null |
        grep -q '^boardkeeper_ingest_entries_read_total 240$' && break
      sleep 0.1
    done
    fetch "http://127.0.0.1:$port/metrics" |
      grep -E '^boardkeeper_(ingest_entries_read_total|ingest_events_applied_total|rehydrations_total)'
    printf 'healthz: %s   readyz: %s\n' "$(fetch "http://127.0.0.1:$port/healthz")" \
      "$(fetch "http://127.0.0.1:$port/readyz")"
    kill -TERM "$ingest_pid"
    status=0
    wait "$ingest_pid" || status=$?
    echo "ingest stopped on SIGTERM after its batch (exit $status)"
  fi
  next=$(date -u -d "$day + 1 day" +%F)
  bkq --now "${next}T00:30:00Z" tick --metrics-file "$metrics" >/dev/null
done
bk_log "The month in SQL: each player's days on the daily podium, and the final monthly board"
psql -X "$BK_TEST_POSTGRES_URL" -c "SELECT member, count(*) FILTER (WHERE rank <= 3) AS podiums,
         min(rank) AS best_rank, sum(points) AS points_in_daily_boards
  FROM boardkeeper.history WHERE board = 'arena' AND period = 'daily'
  GROUP BY member ORDER BY podiums DESC, best_rank, member LIMIT 6"
psql -X "$BK_TEST_POSTGRES_URL" -c "SELECT period_id, rank, member, points, achieved_at
  FROM boardkeeper.history WHERE board = 'arena' AND period = 'monthly' ORDER BY rank LIMIT 5"
psql -X "$BK_TEST_POSTGRES_URL" -c "SELECT period, count(*) AS periods, sum(members) AS rows,
         sum(hot_members) AS from_redis, sum(cold_members) AS from_postgres
  FROM boardkeeper.periods WHERE board = 'arena' GROUP BY period"
bk_log "The last tick's metrics (textfile-collector format, --metrics-file)"
grep -E '^boardkeeper_(tick_(members_spilled|periods_archived|rows_archived|duration_seconds|exit_code|last_success))' "$metrics"

bk_log "The Redis keys and their TTLs (every live key expires; the registry follows its boards)"
redis-cli -p "$BK_REDIS_PORT" --scan --pattern 'demo:*' | sort | while read -r key; do
  printf '  %-45s ttl %ss\n' "$key" "$(redis-cli -p "$BK_REDIS_PORT" ttl "$key")"
done
bk_log "done; servers stopped and temp files removed"
