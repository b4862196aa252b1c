#!/usr/bin/env bash
# Runs the benchmarks at full size: installs what is missing, builds Release, starts
# throwaway Redis and PostgreSQL (with fsync on, as in production) on free loopback ports,
# installs the peer's pinned npm packages (redis-rank, ioredis: tests/bench/peer) into the
# build directory, prints the table, and cleans up. Arguments go to bk_bench
# (e.g. --members 100000; --events 200000 --flat-events 1000000 for the issue's ingest size;
# --cluster-only --rounds 5 for the Redis Cluster rows alone; --closes-only for rows 27 and 28,
# tiers and close notices, alone). `--serve-only [ARGS]` runs
# only the HTTP API's rows (13-15, 17-26: bk_serve_bench, with wrk and redis-benchmark; 24-26
# are the writes);
# a full run ends with them and row 16 (bk_config_bench: loading 200,000 board entries).
set -euo pipefail
BK_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../../deploy/local/setup.sh
source "$BK_ROOT/deploy/local/setup.sh"
trap bk_cleanup EXIT

bk_install
# The peer runs on node; installed with apt-get only when missing (a machine may already
# have node and npm from elsewhere, which Debian's npm package would conflict with).
missing=()
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
command -v wrk >/dev/null || missing+=(wrk)
bk_apt_install "${missing[@]}"
build_dir=$(realpath -m "${BK_BUILD_DIR:-$BK_ROOT/build-bench}")  # absolute: node resolves the peer from elsewhere
bk_log "building (Release) in $build_dir"
cmake -S "$BK_ROOT" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DBK_WERROR=ON >/dev/null
cmake --build "$build_dir" -j"$(nproc)" --target boardkeeper bk_bench bk_serve_bench bk_config_bench \
  bk_erase_bench
peer_dir="$build_dir/tests/bench/peer"
bash "$BK_ROOT/tests/bench/peer/npm-ci.sh" "$peer_dir"
bk_start_redis
bk_start_redis_cluster  # rows 11 and 12 (3 masters + 3 replicas)
BK_PG_FSYNC=on bk_start_postgres
bk_start_postgres_replica  # row 22
if [[ "${1:-}" == --serve-only ]]; then
  shift
  "$build_dir/tests/bench/bk_serve_bench" "$@"
  exit
fi
bk_log "running the benchmarks (a few minutes)"
"$build_dir/tests/bench/bk_bench" --peer "$peer_dir" "$@"
"$build_dir/tests/bench/bk_serve_bench"
"$build_dir/tests/bench/bk_config_bench"  # row 16: a config of 200,000 board entries
"$build_dir/tests/bench/bk_erase_bench"   # erase: 10 boards x 3 periods x 90 archived days
