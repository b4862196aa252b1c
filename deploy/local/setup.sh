# Shared by tests/run.sh and deploy/local/demo.sh (sourced, not run): installs what is
# missing with apt-get, builds boardkeeper, and starts throwaway Redis and PostgreSQL
# servers on free loopback ports in a temp dir, stopped again by bk_cleanup.
# shellcheck shell=bash

BK_ROOT=${BK_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BK_PACKAGES=(build-essential cmake pkg-config python3 tzdata libhiredis-dev libpqxx-dev
  libyaml-cpp-dev libspdlog-dev libcli11-dev libhowardhinnant-date-dev googletest
  libgtest-dev libssl-dev openssl libcpp-httplib-dev nlohmann-json3-dev libboost-dev redis-server
  postgresql)

bk_log() { printf '\033[1m== %s\033[0m\n' "$*" >&2; }

# bk_apt_install [packages...]: installs them with apt-get (sudo when not root); none: nothing.
bk_apt_install() {
  [ $# -eq 0 ] && return 0
  bk_log "installing $*"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

bk_install() {
  local missing=()
  for p in "${BK_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  bk_apt_install "${missing[@]}"
}

# What tests/deploy needs beyond BK_PACKAGES, installed with apt-get only when the command
# is missing: a machine may already have node and npm from elsewhere (Debian's npm package
# would conflict with such a Node.js). systemd is only used for `systemd-analyze`.
bk_install_test_tools() {
  local missing=()
  command -v node >/dev/null || missing+=(nodejs)
  command -v npm >/dev/null || missing+=(npm)
  command -v systemd-analyze >/dev/null || missing+=(systemd)
  command -v wrk >/dev/null || missing+=(wrk)  # the serve benchmark (bench.serve_smoke)
  command -v curl >/dev/null || missing+=(curl)
  command -v ccache >/dev/null || missing+=(ccache)  # rebuilds in CI and between checkouts
  # tests/deploy/image.sh: podman builds and runs the image (runc, as crun is not pulled
  # in without recommends) on a Debian base that debootstrap makes.
  command -v podman >/dev/null || missing+=(podman)
  command -v runc >/dev/null || missing+=(runc)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  # tests/console: the console in Debian's headless chromium (never a downloaded browser).
  command -v chromium >/dev/null || missing+=(chromium)
  # tests/openapi: answers validated against docs/openapi.yaml (JSON Schema 2020-12) by
  # Debian's python3 with Debian's modules.
  /usr/bin/python3 -c 'import jsonschema, yaml' 2>/dev/null || missing+=(python3-jsonschema python3-yaml)
  # tests/integration/reward_consumer_test: the README's reward consumer, run by Debian's python3
  # with Debian's redis and psycopg2 modules.
  /usr/bin/python3 -c 'import redis, psycopg2' 2>/dev/null || missing+=(python3-redis python3-psycopg2)
  bk_apt_install "${missing[@]}"
}

# bk_build <build-dir> [extra cmake args...]
bk_build() {
  local dir=$1
  shift
  bk_log "building in $dir"
  # Line tables only (-g1): backtraces and gdb keep file:line; full debug info made the
  # build 1.5 times as long.
  # ccache, where installed (tests/run.sh installs it): a rebuild of the same sources, in
  # this checkout or another one, compiles nothing again. Paths are made relative to the
  # checkout, so two checkouts share the cache.
  local launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR="$BK_ROOT" CCACHE_NOHASHDIR=true
  fi
  cmake -S "$BK_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" "${launcher[@]}" "$@" >/dev/null
  cmake --build "$dir" -j"$(nproc)"
}

bk_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

BK_TMP=""
BK_REDIS_PID=""
BK_CLUSTER_PIDS=()
BK_TLS_PIDS=()
BK_PG_DATA=""
bk_cleanup() {
  if [ -n "$BK_REDIS_PID" ]; then kill "$BK_REDIS_PID" 2>/dev/null || true; fi
  for pid in "${BK_CLUSTER_PIDS[@]}" "${BK_TLS_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  # A node a test restarted (tests/integration/cluster_faults_test.cpp) is not our child.
  for p in ${BK_CLUSTER_PORTS:-}; do redis-cli -p "$p" shutdown nosave >/dev/null 2>&1 || true; done
  for data in "${BK_PG_REPLICA_DATA:-}" "${BK_PG_DATA:-}"; do
    if [ -n "$data" ] && [ -f "$data/postmaster.pid" ]; then
      bk_as_postgres "$BK_PG_BIN/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true
    fi
  done
  if [ -n "$BK_TMP" ]; then rm -rf "$BK_TMP"; fi
}

bk_tmpdir() {
  if [ -z "$BK_TMP" ]; then
    BK_TMP=$(mktemp -d /tmp/boardkeeper.XXXXXX)
    chmod 755 "$BK_TMP"
  fi
}

# bk_wait_redis <redis-cli args...>: until the server answers PING (10 s at most).
bk_wait_redis() {
  for _ in $(seq 1 100); do
    redis-cli "$@" ping 2>/dev/null | grep -q PONG && return 0
    sleep 0.1
  done
  redis-cli "$@" ping
  return 1
}

# Starts redis-server; exports BK_REDIS_PORT and BK_TEST_REDIS_URL.
bk_start_redis() {
  bk_tmpdir
  BK_REDIS_PORT=$(bk_free_port)
  mkdir -p "$BK_TMP/redis"
  redis-server --port "$BK_REDIS_PORT" --bind 127.0.0.1 --dir "$BK_TMP/redis" --save '' \
    --appendonly no --daemonize no --logfile "$BK_TMP/redis/redis.log" &
  BK_REDIS_PID=$!
  bk_wait_redis -p "$BK_REDIS_PORT" >/dev/null || { cat "$BK_TMP/redis/redis.log"; return 1; }
  export BK_REDIS_PORT BK_TEST_REDIS_URL="redis://127.0.0.1:$BK_REDIS_PORT/0"
  bk_log "redis on 127.0.0.1:$BK_REDIS_PORT"
}

# Six loopback ports, each free and with its cluster bus port (port + 10000) free too, so
# all below 55535, then six more free ones (the nodes' TLS ports).
bk_cluster_ports() {
  python3 - <<'PY'
import random, socket
def free(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()
ports = []
while len(ports) < 6:
    p = random.randint(20000, 45000)
    if all(abs(p - q) != 10000 and p != q for q in ports) and free(p) and free(p + 10000):
        ports.append(p)
taken = set(ports) | {p + 10000 for p in ports}
while len(ports) < 12:
    p = random.randint(20000, 55000)
    if p not in taken and free(p):
        ports.append(p)
        taken.add(p)
print(" ".join(map(str, ports)))
PY
}

# Test certificates, made once per run in $BK_TMP/tls (elliptic-curve keys: fast): ca.crt
# signs server.crt (for 127.0.0.1 and localhost), dnsonly.crt (for localhost only: no IP
# address), client.crt and expired.crt (valid for one day in 2020); other-ca.crt is a CA
# that signed none of them. Exports BK_TEST_TLS_DIR.
bk_test_certs() {
  bk_tmpdir
  local d="$BK_TMP/tls" n
  [ -f "$d/expired.crt" ] && return 0
  mkdir -p "$d/expired-ca"
  local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  openssl req -x509 "${ec[@]}" -keyout "$d/ca.key" -out "$d/ca.crt" -days 30 \
    -subj /CN=boardkeeper-test-ca 2>/dev/null
  openssl req -x509 "${ec[@]}" -keyout "$d/other-ca.key" -out "$d/other-ca.crt" -days 30 \
    -subj /CN=another-ca 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$d/server.ext"
  printf 'subjectAltName=DNS:localhost\n' >"$d/dnsonly.ext"
  printf 'extendedKeyUsage=clientAuth\n' >"$d/client.ext"
  for n in server dnsonly client; do
    openssl req "${ec[@]}" -keyout "$d/$n.key" -out "$d/$n.csr" -subj "/CN=$n" 2>/dev/null
    openssl x509 -req -in "$d/$n.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
      -days 30 -out "$d/$n.crt" -extfile "$d/$n.ext" 2>/dev/null
  done
  # `openssl x509` cannot back-date a certificate; `openssl ca` can.
  : >"$d/expired-ca/index.txt"
  echo 1000 >"$d/expired-ca/serial"
  printf '[ca]\ndefault_ca = d\n[d]\ndatabase = %s\nserial = %s\nnew_certs_dir = %s\npolicy = p\ndefault_md = sha256\n[p]\ncommonName = supplied\n' \
    "$d/expired-ca/index.txt" "$d/expired-ca/serial" "$d/expired-ca" >"$d/expired-ca/ca.cnf"
  openssl req "${ec[@]}" -keyout "$d/expired.key" -out "$d/expired.csr" -subj /CN=expired 2>/dev/null
  openssl ca -batch -config "$d/expired-ca/ca.cnf" -cert "$d/ca.crt" -keyfile "$d/ca.key" \
    -in "$d/expired.csr" -out "$d/expired.crt" -startdate 20200101000000Z \
    -enddate 20200102000000Z -extfile "$d/server.ext" -notext >/dev/null 2>&1
  chmod 644 "$d"/*.key  # the tests (any user) read the client key
  export BK_TEST_TLS_DIR="$d"
}

# Starts four TLS-only Redis servers (no plain port) with bk_test_certs' certificates and
# exports their URLs: BK_TEST_REDIS_TLS_URL (server.crt; client certificates optional),
# BK_TEST_REDIS_MTLS_URL (requires a client certificate signed by ca.crt),
# BK_TEST_REDIS_TLS_EXPIRED_URL (presents expired.crt) and BK_TEST_REDIS_TLS_DNSONLY_URL
# (presents dnsonly.crt, which names localhost but not 127.0.0.1).
bk_start_redis_tls() {
  bk_test_certs
  local d=$BK_TEST_TLS_DIR kind port cert auth
  for kind in tls mtls expired dnsonly; do
    port=$(bk_free_port)
    cert=server
    auth=optional
    [ $kind = mtls ] && auth=yes
    [ $kind = expired ] && cert=expired
    [ $kind = dnsonly ] && cert=dnsonly
    mkdir -p "$BK_TMP/redis-$kind"
    redis-server --port 0 --tls-port "$port" --bind 127.0.0.1 --dir "$BK_TMP/redis-$kind" \
      --tls-cert-file "$d/$cert.crt" --tls-key-file "$d/$cert.key" \
      --tls-ca-cert-file "$d/ca.crt" --tls-auth-clients "$auth" --save '' --appendonly no \
      --daemonize no --logfile "$BK_TMP/redis-$kind/redis.log" &
    BK_TLS_PIDS+=($!)
    bk_wait_redis --tls --insecure --cert "$d/client.crt" --key "$d/client.key" -p "$port" ||
      { cat "$BK_TMP/redis-$kind/redis.log"; return 1; }
    case $kind in
      tls) export BK_TEST_REDIS_TLS_URL="rediss://127.0.0.1:$port" ;;
      mtls) export BK_TEST_REDIS_MTLS_URL="rediss://127.0.0.1:$port" ;;
      expired) export BK_TEST_REDIS_TLS_EXPIRED_URL="rediss://127.0.0.1:$port" ;;
      dnsonly) export BK_TEST_REDIS_TLS_DNSONLY_URL="rediss://127.0.0.1:$port" ;;
    esac
  done
  bk_log "redis with TLS only: $BK_TEST_REDIS_TLS_URL, mutual TLS $BK_TEST_REDIS_MTLS_URL, expired certificate $BK_TEST_REDIS_TLS_EXPIRED_URL, certificate without the IP $BK_TEST_REDIS_TLS_DNSONLY_URL"
}

# Starts a Redis Cluster of 3 masters and 3 replicas on loopback, each node serving plain
# TCP and TLS (bk_test_certs) and the cluster bus over TLS (tls-cluster yes). Exports
# BK_TEST_REDIS_CLUSTER_URL (a seed), BK_TEST_REDIS_CLUSTER_TLS_URL (the same seed's TLS
# port: over TLS a node names the others' TLS ports), BK_CLUSTER_PORTS (masters first, then
# replicas) and BK_CLUSTER_DIR (<dir>/<port>/redis.conf: how a test restarts a node).
# Replication is over TLS too; the bus port is set (with TLS it would follow the TLS port).
bk_start_redis_cluster() {
  bk_test_certs
  local all ports p i dir
  read -ra all <<<"$(bk_cluster_ports)"
  ports=("${all[@]:0:6}")
  for i in 0 1 2 3 4 5; do
    p=${ports[$i]}
    dir="$BK_TMP/cluster/$p"
    mkdir -p "$dir"
    cat >"$dir/redis.conf" <<CONF
port $p
cluster-port $((p + 10000))
tls-port ${all[$((i + 6))]}
tls-cluster yes
tls-replication yes
tls-cert-file $BK_TEST_TLS_DIR/server.crt
tls-key-file $BK_TEST_TLS_DIR/server.key
tls-ca-cert-file $BK_TEST_TLS_DIR/ca.crt
tls-auth-clients optional
bind 127.0.0.1
dir $dir
save ""
appendonly no
cluster-enabled yes
cluster-config-file nodes.conf
cluster-node-timeout 2000
logfile $dir/redis.log
CONF
    redis-server "$dir/redis.conf" --daemonize no &
    BK_CLUSTER_PIDS+=($!)
  done
  for p in "${ports[@]}"; do bk_wait_redis -p "$p" >/dev/null; done
  local nodes=()
  for p in "${ports[@]}"; do nodes+=("127.0.0.1:$p"); done
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >"$BK_TMP/cluster/create.log" 2>&1 ||
    { cat "$BK_TMP/cluster/create.log"; return 1; }
  # Ready when every node sees the whole cluster serving and every replica has synced.
  for _ in $(seq 1 300); do
    local ok=1
    for p in "${ports[@]}"; do
      redis-cli -p "$p" cluster info 2>/dev/null | grep -q "cluster_state:ok" || ok=0
    done
    [ "$(redis-cli -p "${ports[0]}" cluster nodes 2>/dev/null | grep -c "connected")" = 6 ] || ok=0
    for p in "${ports[@]}"; do
      redis-cli -p "$p" info replication 2>/dev/null | grep -q "master_link_status:down" && ok=0
    done
    [ $ok = 1 ] && break
    sleep 0.1
  done
  [ "$ok" = 1 ] || { redis-cli -p "${ports[0]}" cluster nodes; return 1; }
  export BK_CLUSTER_PORTS="${ports[*]}" BK_TEST_REDIS_CLUSTER_URL="redis://127.0.0.1:${ports[0]}/0"
  export BK_TEST_REDIS_CLUSTER_TLS_URL="rediss://127.0.0.1:${all[6]}"
  export BK_CLUSTER_DIR="$BK_TMP/cluster"
  bk_log "redis cluster on 127.0.0.1:${ports[*]}"
}

# PostgreSQL refuses to run as root, so it runs as the postgres user.
bk_as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Starts PostgreSQL 15 with a database "boards"; exports BK_PG_PORT and BK_TEST_POSTGRES_URL.
# fsync is off (throwaway data, faster tests) unless BK_PG_FSYNC=on (the benchmarks).
bk_start_postgres() {
  bk_tmpdir
  BK_PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  BK_PG_PORT=$(bk_free_port)
  BK_PG_DATA="$BK_TMP/pg"
  mkdir -p "$BK_PG_DATA"
  [ "$(id -u)" -eq 0 ] && chown postgres "$BK_PG_DATA"
  bk_as_postgres "$BK_PG_BIN/initdb" -D "$BK_PG_DATA" -U boardkeeper --auth=trust -E UTF8 \
    --locale=C.UTF-8 >/dev/null
  bk_as_postgres "$BK_PG_BIN/pg_ctl" -D "$BK_PG_DATA" -w -l "$BK_PG_DATA/server.log" \
    -o "-p $BK_PG_PORT -k $BK_PG_DATA -c listen_addresses=127.0.0.1 -c fsync=${BK_PG_FSYNC:-off}" start >/dev/null
  bk_as_postgres "$BK_PG_BIN/createdb" -h 127.0.0.1 -p "$BK_PG_PORT" -U boardkeeper boards
  export BK_PG_PORT BK_TEST_POSTGRES_URL="postgresql://boardkeeper@127.0.0.1:$BK_PG_PORT/boards"
  bk_log "postgresql on 127.0.0.1:$BK_PG_PORT"
}

# A streaming replica of bk_start_postgres's server (pg_basebackup -R: a hot standby that
# replays the primary's WAL), for serve's postgres.read_url. Exports BK_TEST_POSTGRES_READ_URL.
bk_start_postgres_replica() {
  BK_PG_REPLICA_PORT=$(bk_free_port)
  BK_PG_REPLICA_DATA="$BK_TMP/pg-replica"
  mkdir -p "$BK_PG_REPLICA_DATA"
  chmod 700 "$BK_PG_REPLICA_DATA"
  [ "$(id -u)" -eq 0 ] && chown postgres "$BK_PG_REPLICA_DATA"
  # (It warns of the primary's socket in its data directory: said only when it fails.)
  bk_as_postgres "$BK_PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$BK_PG_PORT" -U boardkeeper \
    -D "$BK_PG_REPLICA_DATA" -R -X stream -c fast 2>"$BK_TMP/pg_basebackup.log" ||
    { cat "$BK_TMP/pg_basebackup.log"; return 1; }
  bk_as_postgres "$BK_PG_BIN/pg_ctl" -D "$BK_PG_REPLICA_DATA" -w -l "$BK_PG_REPLICA_DATA/server.log" \
    -o "-p $BK_PG_REPLICA_PORT -k $BK_PG_REPLICA_DATA -c listen_addresses=127.0.0.1 -c hot_standby_feedback=on" \
    start >/dev/null
  export BK_PG_REPLICA_PORT \
    BK_TEST_POSTGRES_READ_URL="postgresql://boardkeeper@127.0.0.1:$BK_PG_REPLICA_PORT/boards"
  bk_log "postgresql replica on 127.0.0.1:$BK_PG_REPLICA_PORT"
}
