#!/usr/bin/env bash
# lint.sh [--install]: the CTest test openapi.lint. Lints docs/openapi.yaml with Redocly's
# recommended rules, every warning an error (redocly.yaml; .redocly.lint-ignore.yaml names
# the findings that describe the API as it is), then has a client generator read it:
# openapi-typescript's types must compile (tsc --strict) and give no field an empty type (an
# object schema without properties or additionalProperties: Record<string, never>).
# The npm packages are the versions pinned in package-lock.json, installed from the npm
# registry once into a cache outside the checkout ($BK_OPENAPI_NPM, default
# ~/.cache/boardkeeper/openapi-npm); --install only installs them (tests/run.sh, before
# ctest). Needs node >= 20.19 and npm (tests/run.sh installs them).
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
modules=$npm_dir/node_modules
# No telemetry, no update check: the lint talks to no one.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_UPDATE_NOTIFIER=1
out=$(cd "$root" && node "$modules/@redocly/cli/bin/cli.js" lint \
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

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node "$modules/openapi-typescript/bin/cli.js" "$root/docs/openapi.yaml" -o "$work/api.ts" \
  >"$work/generate.log" 2>&1 || {
  cat "$work/generate.log"
  echo "openapi.lint: openapi-typescript cannot read docs/openapi.yaml (above)" >&2
  exit 1
}
# (.ts, not .d.ts: --skipLibCheck then skips only the standard library.)
node "$modules/typescript/bin/tsc" --noEmit --strict --skipLibCheck "$work/api.ts" || {
  echo "openapi.lint: the TypeScript types of docs/openapi.yaml do not compile (above)" >&2
  exit 1
}
if grep -nE '^ +[A-Za-z_"$][^:]*: Record<string, never>;' "$work/api.ts"; then
  echo "openapi.lint: a field above has no type a client can use (an object schema needs" \
    "properties or additionalProperties)" >&2
  exit 1
fi
echo "openapi.lint: docs/openapi.yaml is clean, and openapi-typescript's types of it compile"
