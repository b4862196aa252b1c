#!/usr/bin/env bash
# check_k8s.sh BOARDKEEPER WORKDIR: the CTest test deploy.k8s. Installs the pinned npm
# packages into WORKDIR (once) and runs check_k8s.js on deploy/k8s.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
binary=${1:?usage: check_k8s.sh BOARDKEEPER WORKDIR}
work=${2:?usage: check_k8s.sh BOARDKEEPER WORKDIR}
base=${BK_K8S_BASE:-$here/../../deploy/k8s}
bash "$here/npm-ci.sh" "$work/npm"
exec node "$here/check_k8s.js" --base "$base" --binary "$binary" --work "$work/k8s" \
  --modules "$work/npm/node_modules"
