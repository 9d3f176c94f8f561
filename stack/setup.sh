#!/usr/bin/env bash
# Installs what the project needs, by tier, idempotently: each step is skipped when its result is
# already there (a stamp of its inputs), so a second run takes a second or two. Every slow step
# says what it does, how long it usually takes, and its time so far (stack/step.sh).
#
#   stack/setup.sh [demo]      make setup: what `make demo` runs and `make up` starts: Debian
#                              packages (build tools, C libraries, ClickHouse, Java, Maven, Go),
#                              .venv with requirements.txt and the cpi2 package, the Kafka and
#                              Flink jars (.stack/lib)
#   stack/setup.sh test        the tier every folder's `make test` shares (mk/common.mk runs it):
#                              .venv as above plus requirements-test.txt (pytest, chdb-core,
#                              jsonschema, ruff), clang-format and perf from Debian, and Telegraf
#   stack/setup.sh telegraf    Telegraf (.stack/bin), which `make up` then starts: the hosts' CPU,
#                              memory and load in ClickHouse (the demo's hosts are simulated, so
#                              the demo does without it)
#   stack/setup.sh apt PKG...  the Debian packages named, those missing (a folder's `make tools`)
#
# Tools only one folder's tests use are that folder's `make -C <folder> tools` (kube-apiserver and
# etcd in k8s/, helm, kubeconform and the CRDs in deploy/, clang's fuzzer in enforcer/, ...),
# built once by its test target and cached in .stack/ like the rest.
. "$(dirname "$0")/lib.sh"
. "$STACK_SRC/step.sh"

# What make demo needs from Debian. Toolchains already on the machine from elsewhere count.
DEMO_APT="build-essential cmake pkg-config libavro-dev librdkafka-dev libssl-dev libjansson-dev clickhouse-server
 clickhouse-client python3-venv jq curl maven openjdk-17-jdk-headless golang-go openssl"
# The multi-node profile's ClickHouse cluster (STACK_ENV=stack/multi.env) needs ZooKeeper.
if [ "${CLICKHOUSE_SHARDS:-1}" != 1 ] || [ "${CLICKHOUSE_REPLICAS:-1}" != 1 ]; then DEMO_APT="$DEMO_APT zookeeper"; fi
# What most folders' tests use from Debian: the C format check, perf for the collector's tests.
TEST_APT="clang-format linux-perf"

# apt_install PKG...: installs the packages that are not installed yet.
apt_install() {
  local p want=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && continue
    case "$p" in
      maven) command -v mvn >/dev/null && continue ;;
      openjdk-17-jdk-headless) command -v javac >/dev/null && continue ;;
      golang-go) command -v go >/dev/null && continue ;;
    esac
    want+=("$p")
  done
  [ ${#want[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || die "installing ${want[*]} needs root (run as root, or install them yourself)"
  step "installing Debian packages: ${want[*]}" "1-4 min, by how many" \
    sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null' apt "${want[@]}"
}

# pip_requirements FILE: installs FILE's pins into .venv when FILE changed since the last install.
pip_requirements() {
  local req="$ROOT/$1" stamp="$ROOT/.venv/.$1.sha" sha
  sha="$(sha256sum "$req" | cut -d' ' -f1)"
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sha" ] && return 0
  step "installing the Python packages of $1 into .venv" "$2" \
    "$ROOT/.venv/bin/pip" install -q --disable-pip-version-check -r "$req"
  echo "$sha" > "$stamp"
}

step_venv() {
  [ -x "$ROOT/.venv/bin/python" ] || { say "creating Python virtualenv .venv"; python3 -m venv "$ROOT/.venv"; }
  pip_requirements requirements.txt "1 min cold, seconds with pip's cache"
}

# The project's own package (pyproject.toml, python/cpi2), editable: an edit needs no reinstall.
# With --no-build-isolation pip builds it with .venv's setuptools, no download.
step_package() {
  "$ROOT/.venv/bin/python" -c 'import sys, cpi2.repo; sys.exit(str(cpi2.repo.ROOT) != sys.argv[1])' "$ROOT" 2>/dev/null \
    && [ -x "$ROOT/.venv/bin/cpi2ctl" ] && return 0
  say "installing the project's Python package (python/cpi2) into .venv, editable"
  "$ROOT/.venv/bin/pip" install -q --disable-pip-version-check --no-deps --no-build-isolation -e "$ROOT"
}

step_jars() {
  local sha; sha="$(sha256sum "$STACK_SRC/jars/pom.xml" | cut -d' ' -f1)"
  for server in kafka flink; do
    local dir="$LIB_DIR/$server" stamp="$LIB_DIR/$server.sha"
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sha" ] && continue
    rm -rf "$dir"; mkdir -p "$dir"
    step "fetching the $server jars from Maven Central into $dir" "1 min cold, seconds with ~/.m2" \
      mvn -q -B -Dstyle.color=never -f "$STACK_SRC/jars/pom.xml" -P"$server" dependency:copy-dependencies \
      -DoutputDirectory="$dir" -DincludeScope=runtime \
      || die "could not fetch the $server jars (mvn dependency:copy-dependencies failed; see above)"
    echo "$sha" > "$stamp"
  done
}

step_telegraf() {
  local stamp="$BIN_DIR/telegraf.version"
  [ -x "$TELEGRAF" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$TELEGRAF_VERSION" ] && return 0
  mkdir -p "$BIN_DIR"
  step "building Telegraf $TELEGRAF_VERSION with only the plugins used (inputs cpu, mem, system; output kafka)" \
    "9 min cold on 2 loaded cores, 1 min with the Go caches" \
    env GOBIN="$BIN_DIR" GOFLAGS=-mod=mod go install \
    -tags "custom,inputs.cpu,inputs.mem,inputs.system,outputs.kafka,serializers.json" \
    "github.com/influxdata/telegraf/cmd/telegraf@$TELEGRAF_VERSION" \
    || die "go install of Telegraf failed (needs the Go module proxy)"
  echo "$TELEGRAF_VERSION" > "$stamp"
}

tier_demo() {
  mkdir -p "$STACK_DIR" "$LIB_DIR" "$BIN_DIR"
  # shellcheck disable=SC2086
  apt_install $DEMO_APT
  step_venv
  step_package
  step_jars
  say "setup done (demo tier)"
}

tier_test() {
  # shellcheck disable=SC2086
  apt_install python3-venv $TEST_APT
  step_venv
  step_package
  pip_requirements requirements-test.txt "1 min cold, chdb-core being large; seconds with pip's cache"
  mkdir -p "$BIN_DIR"
  step_telegraf
}

case "${1:-demo}" in
  demo) tier_demo ;;
  test) tier_test ;;
  telegraf) mkdir -p "$BIN_DIR"; step_telegraf ;;
  apt) shift; apt_install "$@" ;;
  *) echo "usage: $0 [demo | test | telegraf | apt PKG...]" >&2; exit 2 ;;
esac
