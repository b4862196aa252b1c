#!/usr/bin/env bash
# lint.sh [--install]: the CTest test openapi.lint. Lints docs/openapi.yaml with Redocly's
# recommended rules, every warning an error (redocly.yaml; .redocly.lint-ignore.yaml names
# the two findings that describe the API as it is). @redocly/cli is the version pinned in
# package-lock.json, installed from the npm registry once into a cache outside the checkout
# ($BK_OPENAPI_NPM, default ~/.cache/boardkeeper/openapi-npm); --install only installs it
# (tests/run.sh, before ctest). Needs node >= 20.19 and npm (tests/run.sh installs them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
npm_dir=${BK_OPENAPI_NPM:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/boardkeeper/openapi-npm}
# @redocly/cli 2 runs on Node.js 20.19 and later (package-lock.json: its engines).
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number);
              process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'; then
  echo "openapi.lint: Node.js $(node --version) is too old for @redocly/cli: 20.19 or later" >&2
  exit 1
fi
bash "$root/tests/deploy/npm-ci.sh" "$npm_dir" "$here"
[ "${1:-}" = --install ] && exit 0
# No telemetry, no update check: the lint talks to no one.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_UPDATE_NOTIFIER=1
out=$(cd "$root" && node "$npm_dir/node_modules/@redocly/cli/bin/cli.js" lint \
  --config "$here/redocly.yaml" --format stylish docs/openapi.yaml 2>&1) && status=0 || status=$?
# Redocly's banner about Node.js versions is not about the spec.
out=$(printf '%s\n' "$out" | grep -v '[║╔╚]' || true)
printf '%s\n' "$out"
if [ $status -ne 0 ]; then
  echo "openapi.lint: docs/openapi.yaml has problems (above)" >&2
  exit 1
fi
if printf '%s\n' "$out" | grep -qi 'warning'; then
  echo "openapi.lint: docs/openapi.yaml has warnings (above); there must be none" >&2
  exit 1
fi
echo "openapi.lint: docs/openapi.yaml is clean"
