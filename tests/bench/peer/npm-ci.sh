#!/usr/bin/env bash
# npm-ci.sh DIR: installs the exact packages of tests/bench/peer/package-lock.json (the
# benchmark's peer: redis-rank and ioredis) into DIR/node_modules, a build directory:
# node_modules never goes into the checkout. Does nothing when DIR already holds that lock's
# install. Needs node and npm (tests/bench/run.sh installs them) and the npm registry.
# The same steps as tests/deploy/npm-ci.sh, for this directory's lock.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: npm-ci.sh DIR}
mkdir -p "$dir"
if [ -f "$dir/node_modules/.bk-installed-lock" ] &&
  cmp -s "$here/package-lock.json" "$dir/node_modules/.bk-installed-lock" &&
  cmp -s "$here/package.json" "$dir/package.json"; then
  exit 0
fi
for tool in node npm; do
  command -v "$tool" >/dev/null || {
    echo "npm-ci.sh: $tool is missing (tests/bench/run.sh installs it: apt-get install nodejs npm)" >&2
    exit 1
  }
done
cp "$here/package.json" "$here/package-lock.json" "$dir/"
echo "npm-ci.sh: npm ci in $dir" >&2
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
cp "$here/package-lock.json" "$dir/node_modules/.bk-installed-lock"
