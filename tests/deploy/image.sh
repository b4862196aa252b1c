#!/usr/bin/env bash
# Builds deploy/docker/Dockerfile with podman and runs the image the way a cluster would
# (read-only root, no capabilities, uid 10001, URLs from the environment) against the
# throwaway servers of tests/run.sh:
#   --version (build details), the OCI labels, a runtime layer without apt's lists or
#   caches, check-config (the example config; a broken one: exit 2 naming file:line:column),
#   migrate, add, tick (the closed day archived: checked in boardkeeper.history), serve
#   (/readyz, a token-protected read of the archived day, /metrics with process_*, a
#   graceful stop on SIGTERM, the token never logged).
#
#   tests/deploy/image.sh       needs BK_TEST_REDIS_URL and BK_TEST_POSTGRES_URL (run.sh's)
#
# No registry is reachable from these machines, so both stages are built on a Debian 12
# base made here by `debootstrap --variant=minbase bookworm` and imported into podman (kept
# as localhost/boardkeeper-base:bookworm for the next run). Where containers cannot be built
# or run here (no podman, not root, no Debian mirror, a runtime that cannot start a
# container) it prints one "SKIPPED: why" line and exits 0; a failed check exits 1.
#   BK_IMAGE=0                  skip on purpose
#   BK_DEBIAN_MIRROR=URL        debootstrap's mirror (default http://deb.debian.org/debian)
#   BK_DEBIAN_SECURITY=URL      the security suite's (default: the mirror's .../debian-security)
# The base is made once and kept: `podman rmi localhost/boardkeeper-base:bookworm` makes it
# again (after changing the mirror, say).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../../deploy/local/setup.sh
source "$root/deploy/local/setup.sh"  # bk_free_port

say() { printf '\033[1m== image: %s\033[0m\n' "$*" >&2; }
skip() {
  say "SKIPPED: $* (the image was not built or run)"
  exit 0
}
fail() {
  say "FAILED: $*"
  exit 1
}

[ "${BK_IMAGE:-1}" = 0 ] && skip "BK_IMAGE=0"
command -v podman >/dev/null || skip "podman is not installed"
[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap and podman's system storage)"
: "${BK_TEST_REDIS_URL:?run from tests/run.sh, which starts Redis}"
: "${BK_TEST_POSTGRES_URL:?run from tests/run.sh, which starts PostgreSQL}"
podman info >/dev/null 2>&1 || skip "podman info fails: $(podman info 2>&1 | tail -1)"

work=$(mktemp -d "${TMPDIR:-/tmp}/boardkeeper-image.XXXXXX")
serve_name="boardkeeper-image-serve-$$"
database="boardkeeper_image_$$"
cleanup() {
  podman rm -f "$serve_name" >/dev/null 2>&1 || true
  psql -q "$BK_TEST_POSTGRES_URL" -c "DROP DATABASE IF EXISTS $database" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# The rlimits runc may set here: at most the shell's own (raising them is refused on some
# machines, and podman's defaults for root are higher).
limit() { local h=$1; [ "$h" = unlimited ] || [ "$h" -gt 4096 ] && h=4096; echo "$h"; }
nofile=$(limit "$(ulimit -Hn)")
nproc=$(limit "$(ulimit -Hu)")
limits=(--network host --ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")

# --- the base image -----------------------------------------------------------------------
base=localhost/boardkeeper-base:bookworm
if ! podman image exists "$base"; then
  command -v debootstrap >/dev/null || skip "debootstrap is not installed"
  mirror=${BK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
  mirror=${mirror%/}
  say "making $base with debootstrap from $mirror"
  if ! debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1; then
    tail -5 "$work/debootstrap.log" >&2
    skip "debootstrap could not make a Debian 12 root from $mirror"
  fi
  # The same suites as a Debian image: security and point-release updates.
  security=${BK_DEBIAN_SECURITY:-${mirror%/debian}/debian-security}
  printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s bookworm-security main\n' \
    "$mirror" "$mirror" "$security" >"$work/rootfs/etc/apt/sources.list"
  rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/var/lib/apt/lists/*
  tar -C "$work/rootfs" -c . | podman import -q - "$base" >/dev/null
  rm -rf "$work/rootfs"
fi
podman run --rm "${limits[@]}" "$base" true >"$work/probe.log" 2>&1 ||
  skip "podman cannot run a container here: $(tail -1 "$work/probe.log")"

# --- the build ----------------------------------------------------------------------------
version=$(sed -n 's/^project(boardkeeper VERSION \([^ )]*\).*/\1/p' "$root/CMakeLists.txt")
revision=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
image=localhost/boardkeeper:image-test
previous=$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
say "building boardkeeper $version (revision $revision) with podman"
podman build --isolation chroot -f "$root/deploy/docker/Dockerfile" \
  --build-arg BUILD_IMAGE="$base" --build-arg RUNTIME_IMAGE="$base" \
  --build-arg VERSION="$version" --build-arg REVISION="$revision" \
  --build-arg SOURCE=https://example.invalid/boardkeeper \
  -t "$image" "$root" >"$work/build.log" 2>&1 || {
  tail -40 "$work/build.log" >&2
  fail "podman build failed"
}
# The image this replaced (an earlier revision's), so that runs do not pile them up; the
# build stage's cached layers stay, for the next run.
now_id=$(podman image inspect --format '{{.Id}}' "$image") || fail "podman image inspect $image"
if [ -n "$previous" ] && [ "$previous" != "$now_id" ]; then
  podman rmi "$previous" >/dev/null 2>&1 || true
fi
# A wrong VERSION must stop the build (the Dockerfile names no version of its own).
if podman build --isolation chroot -f "$root/deploy/docker/Dockerfile" \
  --build-arg BUILD_IMAGE="$base" --build-arg RUNTIME_IMAGE="$base" \
  --build-arg VERSION="9.9.9" -t localhost/boardkeeper:image-test-wrong "$root" \
  >"$work/wrong.log" 2>&1; then
  podman rmi -f localhost/boardkeeper:image-test-wrong >/dev/null 2>&1 || true
  fail "a build with VERSION=9.9.9 succeeded"
fi
grep -q "VERSION '9.9.9' is not the version in CMakeLists.txt" "$work/wrong.log" ||
  fail "a build with the wrong VERSION did not say why it stopped: $(tail -3 "$work/wrong.log")"

# --- what the image is --------------------------------------------------------------------
expect_eq() { [ "$2" = "$3" ] || fail "$1: expected '$3', got '$2'"; }
label() {
  podman image inspect --format "{{ index .Labels \"org.opencontainers.image.$1\" }}" "$image" ||
    fail "podman image inspect $image"
}
expect_eq "label version" "$(label version)" "$version"
expect_eq "label revision" "$(label revision)" "$revision"
expect_eq "label source" "$(label source)" "https://example.invalid/boardkeeper"
expect_eq "label licenses" "$(label licenses)" "NOASSERTION"
expect_eq "label title" "$(label title)" "boardkeeper"
user=$(podman image inspect --format '{{.Config.User}}' "$image") || fail "podman image inspect $image"
expect_eq "user" "$user" "10001:10001"
# As root, so that apt's own 0700 directories are searched too.
leftovers=$(podman run --rm "${limits[@]}" --user 0 --entrypoint /bin/sh "$image" -c '
  for d in /var/lib/apt/lists /var/cache/apt; do
    [ -d "$d" ] && find "$d" -type f ! -name lock
  done
  for f in /var/log/apt /var/log/dpkg.log /var/log/alternatives.log; do
    if [ -e "$f" ]; then echo "$f"; fi
  done') || fail "could not look for apt's files in the image"
[ -z "$leftovers" ] || fail "the runtime layer keeps apt's files: $leftovers"

# How a cluster runs it: read-only root, no capabilities, no privilege escalation.
# bk [podman run options...] IMAGE [boardkeeper arguments...]
bk() {
  podman run "${limits[@]}" --read-only --cap-drop ALL --security-opt no-new-privileges \
    -e BOARDKEEPER_REDIS_URL="$redis_url" -e BOARDKEEPER_POSTGRES_URL="$postgres_url" \
    -v "$work/boardkeeper.yaml:/etc/boardkeeper/boardkeeper.yaml:ro" "$@"
}
redis_url=$BK_TEST_REDIS_URL
postgres_url=${BK_TEST_POSTGRES_URL%/*}/$database

out=$(podman run --rm "${limits[@]}" "$image" --version) || fail "--version failed: $out"
[[ "$out" == "boardkeeper $version (revision $revision, Release build, GNU "* ]] ||
  fail "--version printed '$out'"
podman run --rm "${limits[@]}" --read-only "$image" check-config >"$work/out" 2>&1 ||
  fail "check-config of the image's own example config: $(cat "$work/out")"

printf 'redis:\n  key_prefix: image\nboards:\n  - name: points\n    periods: [daily\n' \
  >"$work/boardkeeper.yaml"
chmod 0644 "$work/boardkeeper.yaml"
status=0
bk --rm "$image" check-config >"$work/out" 2>&1 || status=$?
expect_eq "check-config of a broken config: exit code" "$status" 2
grep -Eq '/etc/boardkeeper/boardkeeper\.yaml:[0-9]+:[0-9]+: ' "$work/out" ||
  fail "check-config of a broken config did not name file:line:column: $(cat "$work/out")"

# --- a day of a board, archived -----------------------------------------------------------
day=$(date -u +%F)
next=$(date -u -d "$day + 1 day" +%F)
cat >"$work/boardkeeper.yaml" <<YAML
redis:
  url: redis://placeholder:1/0   # BOARDKEEPER_REDIS_URL overrides
  key_prefix: image$$
postgres:
  url: postgresql://placeholder/none
boards:
  - name: points
    periods: [daily]
    timezone: UTC
    max_points: 1000000
    hot_keep: 2          # bob (3rd) is spilled to PostgreSQL before the day is archived
    display: 2
    retention: {daily: 3d}
YAML
psql -q "$BK_TEST_POSTGRES_URL" -c "CREATE DATABASE $database" >/dev/null
bk --rm "$image" migrate >"$work/out" 2>&1 || fail "migrate: $(cat "$work/out")"
bk --rm "$image" --now "${day}T12:00:00Z" add points alice 100 --at "${day}T09:00:00Z" --name "Alice L." \
  >"$work/out" 2>&1 || fail "add: $(cat "$work/out")"
bk --rm "$image" --now "${day}T12:00:00Z" add points bob 70 --at "${day}T09:30:00Z" >"$work/out" 2>&1 ||
  fail "add: $(cat "$work/out")"
bk --rm "$image" --now "${day}T12:00:00Z" add points carol 120 --at "${day}T10:00:00Z" >"$work/out" 2>&1 ||
  fail "add: $(cat "$work/out")"
bk --rm "$image" --now "${next}T00:15:00Z" tick --json >"$work/tick.json" 2>"$work/tick.err" ||
  fail "tick: $(cat "$work/tick.err")"
grep -Eq '"rows_archived":3[,}]' "$work/tick.json" || fail "tick did not archive 3 rows: $(cat "$work/tick.json")"
history=$(psql -qAt -F ' ' "$postgres_url" -c \
  "SELECT rank, member, points, coalesce(name, '-') FROM boardkeeper.history
    WHERE board = 'points' AND period = 'daily' AND period_id = '$day' ORDER BY rank") ||
  fail "could not read boardkeeper.history"
expect_eq "boardkeeper.history" "$history" "$(printf '1 carol 120 -\n2 alice 100 Alice L.\n3 bob 70 -')"

# --- serve --------------------------------------------------------------------------------
port=$(bk_free_port)
token="image-token-$$-secret"
bk -d --name "$serve_name" -e BOARDKEEPER_SERVE_TOKENS="$token" "$image" \
  --now "${next}T00:20:00Z" --log-format json serve --listen "127.0.0.1:$port" --workers 2 >/dev/null
for _ in $(seq 100); do
  curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -fs "http://127.0.0.1:$port/readyz" >/dev/null || {
  podman logs "$serve_name" >&2
  fail "serve never became ready"
}
url="http://127.0.0.1:$port/v1/boards/points/daily/top?period_id=$day&limit=10"
expect_eq "GET top without a token" "$(curl -s -o /dev/null -w '%{http_code}' "$url")" 401
body=$(curl -fs -H "Authorization: Bearer $token" "$url") || fail "GET $url failed"
python3 - "$body" <<'PY' || fail "GET top answered $body"
import json, sys
answer = json.loads(sys.argv[1])
assert answer["state"] == "archived", answer["state"]
rows = [(r["rank"], r["member"], r["points"], r.get("name")) for r in answer["records"]]
assert rows == [(1, "carol", 120, None), (2, "alice", 100, "Alice L."), (3, "bob", 70, None)], rows
PY
metrics=$(curl -fs "http://127.0.0.1:$port/metrics") || fail "GET /metrics failed"
grep -q '^process_start_time_seconds ' <<<"$metrics" || fail "/metrics has no process_start_time_seconds"
grep -q '^boardkeeper_http_requests_total{' <<<"$metrics" || fail "/metrics has no request counter"
podman stop -t 20 "$serve_name" >/dev/null || fail "podman stop $serve_name"
code=$(podman inspect --format '{{.State.ExitCode}}' "$serve_name") || fail "podman inspect $serve_name"
expect_eq "serve's exit code after SIGTERM" "$code" 0
podman logs "$serve_name" >"$work/serve.log" 2>&1 || fail "podman logs $serve_name"
if grep -qF -- "$token" "$work/serve.log"; then fail "serve logged its token"; fi
python3 - "$work/serve.log" <<'PY' || fail "serve's log is not JSON lines: $(head -3 "$work/serve.log")"
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
assert lines, "no log lines"
for l in lines:
    json.loads(l)
PY

say "ok: built, labelled, checked config, migrated, archived a day, served it, stopped cleanly"
