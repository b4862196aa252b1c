#!/usr/bin/env bash
# check_systemd.sh BOARDKEEPER: the CTest test deploy.systemd, on deploy/systemd/*.
#  - systemd-analyze verify on copies of the units whose ExecStart runs the built binary
#    (the installed path does not exist here): unknown keys, bad values, a bad OnCalendar,
#    a timer without its service all fail;
#  - systemd-analyze security --offline: the hardening must keep exposure at 2.0 or below;
#  - what boardkeeper needs: the tick is a oneshot started by the timer, ingest restarts on
#    failure and stops with SIGTERM, both read /etc/boardkeeper/env;
#  - each ExecStart's boardkeeper command line, run by the built binary with Redis and
#    PostgreSQL down, gets past the command line (exit 3, unreachable; 2 is a usage error;
#    ingest retries until stopped, then 0).
# BK_SYSTEMD_DIR=DIR checks other units.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
binary=$(realpath "${1:?usage: check_systemd.sh BOARDKEEPER}")
units=${BK_SYSTEMD_DIR:-$here/../../deploy/systemd}
example_config=$here/../../config/boardkeeper.yaml
installed=/usr/local/bin/boardkeeper

command -v systemd-analyze >/dev/null || {
  echo "FAIL systemd-analyze is missing (tests/run.sh installs it: apt-get install systemd)"
  exit 1
}

failures=0
fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mapfile -t files < <(cd "$units" && ls)
[ ${#files[@]} -gt 0 ] || fail "no units in $units"
for f in "${files[@]}"; do
  case $f in
    *.service | *.timer) ;;
    *) fail "$f: not a .service or .timer" ;;
  esac
  grep -q "^ExecStart=$installed " "$units/$f" || [[ $f != *.service ]] ||
    fail "$f: ExecStart must run $installed"
  sed "s#^ExecStart=$installed #ExecStart=$binary #" "$units/$f" >"$tmp/$f"
done

# verify prints problems (unknown keys, values it ignores) as warnings with exit 0: any
# line that names one of our units is a failure.
verify_status=0
out=$(cd "$tmp" && systemd-analyze verify "${files[@]/#/./}" 2>&1) || verify_status=$?
mine=$(printf '%s\n' "$out" | grep -F -e "$tmp" $(printf -- '-e %s ' "${files[@]}") || true)
if [ -n "$mine" ] || [ $verify_status -ne 0 ]; then
  fail "systemd-analyze verify (exit $verify_status):"
  printf '%s\n' "$out"
else
  echo "systemd-analyze verify: ${files[*]} clean"
fi

for f in "${files[@]}"; do
  [[ $f == *.service ]] || continue
  if ! (cd "$tmp" && systemd-analyze security --offline=true --threshold=20 "./$f" >"$tmp/security.out" 2>&1); then
    fail "$f: systemd-analyze security exposure above 2.0:"
    grep -E "✗|Overall" "$tmp/security.out" || cat "$tmp/security.out"
  else
    echo "$f: $(grep Overall "$tmp/security.out")"
  fi
done

# key=value as systemd reads it (last assignment wins), e.g. `setting tick.service Type`.
setting() { sed -n "s/^$2=//p" "$units/$1" | tail -1; }
want() {
  local file=$1 key=$2 expected=$3 got
  got=$(setting "$file" "$key")
  [ "$got" = "$expected" ] || fail "$file: $key=$got, want $expected"
}
want boardkeeper-tick.service Type oneshot
want boardkeeper-tick.timer Unit boardkeeper-tick.service
want boardkeeper-ingest.service Type simple
want boardkeeper-ingest.service Restart on-failure
want boardkeeper-ingest.service KillSignal SIGTERM
[ -n "$(setting boardkeeper-ingest.service TimeoutStopSec)" ] || fail "boardkeeper-ingest.service: no TimeoutStopSec"
[ -n "$(setting boardkeeper-tick.timer OnCalendar)" ] || fail "boardkeeper-tick.timer: no OnCalendar"
for f in boardkeeper-tick.service boardkeeper-ingest.service; do
  want "$f" User boardkeeper
  want "$f" NoNewPrivileges yes
  want "$f" ProtectSystem strict
  want "$f" EnvironmentFile -/etc/boardkeeper/env

  # The command line: $VARIABLES (empty by default) dropped, the example config instead of
  # /etc/boardkeeper's.
  read -r -a argv <<<"$(setting "$f" ExecStart)"
  args=()
  for ((i = 1; i < ${#argv[@]}; i++)); do
    a=${argv[i]}
    case $a in
      \$*) continue ;;
      *[\'\"\\\`]*) fail "$f: ExecStart argument $a needs quoting, which this test does not read" ;;
    esac
    if [ "${argv[i - 1]}" = --config ]; then a=$example_config; fi
    args+=("$a")
  done
  # ingest waits outages out: it must be retrying Redis when stopped (SIGTERM), then exit 0.
  want_status=3
  limit=30
  if [ "$f" = boardkeeper-ingest.service ]; then
    want_status=0
    limit=2
  fi
  set +e
  BOARDKEEPER_REDIS_URL=redis://127.0.0.1:1/0 \
    BOARDKEEPER_POSTGRES_URL=postgresql://boardkeeper@127.0.0.1:1/boards \
    timeout --preserve-status -s TERM "$limit" "$binary" "${args[@]}" >"$tmp/run.out" 2>&1
  status=$?
  set -e
  if [ $status -ne $want_status ] ||
    { [ $want_status -eq 0 ] && ! grep -q "redis failed" "$tmp/run.out"; }; then
    fail "$f: boardkeeper ${args[*]} exits $status with Redis and PostgreSQL down, not $want_status:"
    cat "$tmp/run.out"
  else
    echo "$f: boardkeeper ${args[*]}: command line accepted"
  fi
done

if [ $failures -gt 0 ]; then
  echo "$failures problem(s) in $units"
  exit 1
fi
echo "deploy/systemd: ${#files[@]} units verified"
