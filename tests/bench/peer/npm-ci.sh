#!/usr/bin/env bash
# npm-ci.sh DIR: installs the exact packages of this directory's package-lock.json (the
# benchmark's peer: redis-rank and ioredis) into DIR/node_modules, with tests/deploy's
# installer (it does nothing when DIR already holds that lock's install).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../../deploy/npm-ci.sh" "${1:?usage: npm-ci.sh DIR}" "$here"
