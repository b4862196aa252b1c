#!/usr/bin/env bash
# smoke.sh BK_BENCH PEER_DIR [bk_bench arguments...]: the CTest test bench.smoke. Installs
# the peer's pinned npm packages into PEER_DIR (once) and runs bk_bench with the peer.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=${1:?usage: smoke.sh BK_BENCH PEER_DIR [args...]}
peer=${2:?usage: smoke.sh BK_BENCH PEER_DIR [args...]}
shift 2
bash "$here/peer/npm-ci.sh" "$peer"
exec "$bench" --peer "$peer" "$@"
