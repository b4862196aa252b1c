#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, starts throwaway Redis (one server, a
# 3-master + 3-replica cluster, TLS-only servers with certificates made now by openssl) and
# PostgreSQL on free loopback ports, runs ctest, stops the servers and exits with the tests'
# status.
# tests/deploy also needs node, npm and systemd-analyze (installed when missing) and the
# npm registry (its packages go into the build directory); tests/deploy/image.sh, run after
# ctest, builds and runs the container image with podman (and a Debian mirror).
# tests/openapi also needs Debian's python3-jsonschema, and @redocly/cli and openapi-typescript
# from the npm registry (into ~/.cache/boardkeeper, outside the checkout).
# tests/integration/reward_consumer_test runs the README's reward consumer with Debian's
# python3-redis and python3-psycopg2.
# tests/console drives the web console in Debian's headless chromium (installed when
# missing; console.browser skips with a line saying why where it cannot start).
#   BK_SANITIZE=1 tests/run.sh    also builds and runs everything under ASan + UBSan
#   BK_BUILD_DIR=dir              where to build (default build-tests)
set -euo pipefail
BK_ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../deploy/local/setup.sh
source "$BK_ROOT/deploy/local/setup.sh"
trap bk_cleanup EXIT

bk_install
bk_install_test_tools
build_dir=${BK_BUILD_DIR:-$BK_ROOT/build-tests}
extra=()
if [ "${BK_SANITIZE:-0}" = 1 ]; then
  extra+=(-DBK_SANITIZE=ON)
  build_dir="${build_dir}-asan"
fi
bk_build "$build_dir" -DBK_WERROR=ON "${extra[@]}"
# tests/deploy's pinned npm packages (from the npm registry, once per build directory).
bash "$BK_ROOT/tests/deploy/npm-ci.sh" "$build_dir/tests/deploy/npm"
# openapi.lint's npm packages (@redocly/cli, openapi-typescript: pinned in tests/openapi; into
# ~/.cache/boardkeeper, once).
bash "$BK_ROOT/tests/openapi/lint.sh" --install
bk_start_redis
bk_start_redis_cluster
bk_start_redis_tls
bk_start_postgres
bk_start_postgres_replica  # bench.serve_smoke's row 22 (replica_test has its own)

bk_log "running tests"
cd "$build_dir"
status=0
ctest --output-on-failure -j2 --timeout 600 || status=$?
# The container image, once: in the plain run (it is a Release build of its own, the same
# under BK_SANITIZE=1). It skips with a line saying why where podman cannot work.
if [ "${BK_SANITIZE:-0}" = 1 ]; then
  bk_log "image: checked by the plain run (tests/run.sh without BK_SANITIZE)"
else
  bash "$BK_ROOT/tests/deploy/image.sh" || status=1
fi
exit $status
