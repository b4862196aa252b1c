#!/usr/bin/env bash
# Runs one integration suite against the Redis Cluster (3 masters, 3 replicas) that
# tests/run.sh starts: the suite's configs say `cluster: true` and its connections route by
# slot (tests/integration/harness.cpp).
set -euo pipefail
: "${BK_TEST_REDIS_CLUSTER_URL:?is not set: run the tests through tests/run.sh}"
BK_TEST_REDIS_URL=$BK_TEST_REDIS_CLUSTER_URL BK_TEST_REDIS_CLUSTER=1 exec "$@"
