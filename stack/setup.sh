#!/usr/bin/env bash
# make setup: install everything the project needs, idempotently. Each step is skipped when
# its result is already there, so a second run takes a few seconds.
#   apt packages -> Python virtualenv (.venv) and the cpi2 package -> server jars (.stack/lib) -> Telegraf, kube-apiserver, helm, kubeconform (.stack/bin)
. "$(dirname "$0")/lib.sh"

APT_PACKAGES="build-essential cmake pkg-config libavro-dev librdkafka-dev libjansson-dev clickhouse-server
 clickhouse-client linux-perf python3-venv jq curl maven openjdk-17-jdk-headless golang-go openssl
 clang libclang-rt-14-dev clang-format etcd-server zookeeper"

step_apt() {
  local missing=()
  for p in $APT_PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # Toolchains that are already on the machine from elsewhere count as present.
  local want=()
  for p in "${missing[@]}"; do
    case "$p" in
      maven) command -v mvn >/dev/null || want+=("$p") ;;
      openjdk-17-jdk-headless) command -v javac >/dev/null || want+=("$p") ;;
      golang-go) command -v go >/dev/null || want+=("$p") ;;
      *) want+=("$p") ;;
    esac
  done
  [ ${#want[@]} -eq 0 ] && return 0
  say "installing apt packages: ${want[*]}"
  [ "$(id -u)" = 0 ] || die "installing ${want[*]} needs root (run make setup as root, or install them yourself)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${want[@]}" >/dev/null
}

step_venv() {
  local req="$ROOT/requirements.txt" stamp="$ROOT/.venv/.requirements.sha"
  [ -x "$ROOT/.venv/bin/python" ] || { say "creating Python virtualenv .venv"; python3 -m venv "$ROOT/.venv"; }
  [ -f "$req" ] || return 0
  local sha; sha="$(sha256sum "$req" | cut -d' ' -f1)"
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sha" ] && return 0
  say "installing Python packages from requirements.txt"
  "$ROOT/.venv/bin/pip" install -q --disable-pip-version-check -r "$req"
  echo "$sha" > "$stamp"
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
    say "fetching $server jars from Maven Central into $dir"
    rm -rf "$dir"; mkdir -p "$dir"
    mvn -q -B -Dstyle.color=never -f "$STACK_SRC/jars/pom.xml" -P"$server" dependency:copy-dependencies \
      -DoutputDirectory="$dir" -DincludeScope=runtime \
      || die "could not fetch the $server jars (mvn dependency:copy-dependencies failed; see above)"
    echo "$sha" > "$stamp"
  done
}

step_telegraf() {
  local stamp="$BIN_DIR/telegraf.version"
  [ -x "$TELEGRAF" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$TELEGRAF_VERSION" ] && return 0
  say "building Telegraf $TELEGRAF_VERSION with only the plugins used (inputs cpu, mem, system; output kafka)"
  mkdir -p "$BIN_DIR"
  GOBIN="$BIN_DIR" GOFLAGS=-mod=mod go install \
    -tags "custom,inputs.cpu,inputs.mem,inputs.system,outputs.kafka,serializers.json" \
    "github.com/influxdata/telegraf/cmd/telegraf@$TELEGRAF_VERSION" \
    || die "go install of Telegraf failed (needs the Go module proxy)"
  echo "$TELEGRAF_VERSION" > "$stamp"
}

# kube-apiserver for k8s/'s tests, from the Kubernetes Go modules pinned in k8s/apiserver/go.mod
step_kube_apiserver() {
  local mod="$ROOT/k8s/apiserver" stamp="$BIN_DIR/kube-apiserver.sha" sha
  sha="$(cat "$mod/go.mod" "$mod/go.sum" | sha256sum | cut -d' ' -f1)"
  [ -x "$BIN_DIR/kube-apiserver" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sha" ] && return 0
  say "building kube-apiserver from the Kubernetes Go modules (k8s/apiserver/go.mod)"
  (cd "$mod" && go build -trimpath -buildvcs=false -ldflags=-s -o "$BIN_DIR/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver) \
    || die "go build of kube-apiserver failed (needs the Go module proxy)"
  echo "$sha" > "$stamp"
}

# helm, kubeconform and the operators' CRDs for deploy/'s tests (deploy/tools/install.sh)
step_deploy_tools() {
  "$ROOT/deploy/tools/install.sh" "$BIN_DIR" "$LIB_DIR" || die "deploy/tools/install.sh failed (see above)"
}

mkdir -p "$STACK_DIR" "$LIB_DIR" "$BIN_DIR"
step_apt
step_venv
step_package
step_jars
step_telegraf
step_kube_apiserver
step_deploy_tools
say "setup done"
