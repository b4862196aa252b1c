#!/usr/bin/env bash
# npm-ci.sh DIR [PACKAGE_DIR]: installs the exact packages of PACKAGE_DIR/package-lock.json
# (default: tests/deploy's) into DIR/node_modules (a build directory: node_modules never goes
# into the checkout). Does nothing when DIR already holds that lock's install. Needs node
# and npm (tests/run.sh and tests/bench/run.sh install them) and the npm registry.
set -euo pipefail
dir=${1:?usage: npm-ci.sh DIR [PACKAGE_DIR]}
here=$(cd "${2:-$(dirname "$0")}" && pwd)
mkdir -p "$dir"
if [ -f "$dir/node_modules/.bk-installed-lock" ] &&
  cmp -s "$here/package-lock.json" "$dir/node_modules/.bk-installed-lock" &&
  cmp -s "$here/package.json" "$dir/package.json"; then
  exit 0
fi
for tool in node npm; do
  command -v "$tool" >/dev/null || {
    echo "npm-ci.sh: $tool is missing (apt-get install nodejs npm)" >&2
    exit 1
  }
done
cp "$here/package.json" "$here/package-lock.json" "$dir/"
echo "npm-ci.sh: npm ci in $dir" >&2
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
cp "$here/package-lock.json" "$dir/node_modules/.bk-installed-lock"
