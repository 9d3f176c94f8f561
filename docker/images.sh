#!/usr/bin/env bash
# make images: every image the chart and docker-compose.yml name, built here without a Docker
# engine or a registry.
#   docker/images.sh [IMAGE...]       build (default: every image), then list them with their sizes
#   docker/images.sh --env            print the environment that points podman/buildah at this storage
#   docker/images.sh --list           the images: name, Containerfile, target, context
#   docker/images.sh --stage [CTX...]  only stage the contexts (default: every one) into IMAGES_CONTEXT
#
# 1. The programs, by the project's own builds (CMake Release, go build, Maven), staged with what
#    each image carries into build/images/<context>/: the Containerfiles only copy them.
# 2. The base (BASE_IMAGE): a Debian 12 root filesystem made by mmdebstrap from Debian's
#    packages (no registry), imported once; rebuilt when this script's base recipe changes.
# 3. buildah builds each Containerfile of docker/ from it (--build-arg BASE, VERSION), --layers.
# Storage: STACK_DIR/containers (storage.conf and containers.conf of its own, so several checkouts
# on one machine never share images, locks or run folders). IMAGE_BUILDER=docker builds the same
# Containerfiles with Docker from debian:12.12-slim instead (no mmdebstrap).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STACK_DIR="${STACK_DIR:-$ROOT/.stack}"
CTX="${IMAGES_CONTEXT:-$ROOT/build/images}"
IMAGE_BUILDER="${IMAGE_BUILDER:-buildah}"
# The one version of every image: the chart's appVersion (the chart names its images by it).
VERSION="$("$ROOT/mk/version.sh")"
DEBIAN_SUITE=bookworm
BASE_IMAGE="localhost/cpi2/debian:12"
MIRROR=http://deb.debian.org

say() { echo "images: $*"; }
die() { echo "images: error: $*" >&2; exit 1; }

# name  Containerfile (docker/)  target  context (build/images/)
IMAGE_TABLE="
collectors agents.Dockerfile collector agents
enforcer agents.Dockerfile enforcer agents
k8s-identity identity.Dockerfile - identity
flink-jobs flink.Dockerfile - flink
tools tools.Dockerfile - tools
"

containers_env() {
  local d="$STACK_DIR/containers"
  mkdir -p "$d/storage" "$d/run" "$d/tmp"
  cat > "$d/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$d/storage"
runroot = "$d/run"
EOF
  # no systemd here: cgroupfs; runc (crun refuses the hybrid cgroup v1/v2 layout); limits no higher
  # than this shell's and conmon's (32768 processes), as a root without CAP_SYS_RESOURCE may not
  # raise them (podman's defaults do: "error setting rlimit ... operation not permitted"); host network
  # (the local stack listens on 127.0.0.1); never a pull (no registry here: every image is built);
  # podman's state and events under this folder too
  local nproc; nproc=$(ulimit -Hu); [ "$nproc" != unlimited ] && [ "$nproc" -le 32768 ] || nproc=32768
  cat > "$d/containers.conf" <<EOF
[containers]
netns = "host"
default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)", "nproc=$nproc:$nproc"]
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$d/events.log"
tmp_dir = "$d/tmp"
runtime = "runc"
pull_policy = "never"
EOF
  export CONTAINERS_STORAGE_CONF="$d/storage.conf" CONTAINERS_CONF="$d/containers.conf"
}

need() {
  local missing=() p
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing Debian packages: ${missing[*]}"
  [ "$(id -u)" = 0 ] || die "installing ${missing[*]} needs root"
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The base: what debian:12-slim is (essential packages and apt; no documentation, manual pages or
# translations, and dpkg keeps leaving them out of what the images install later). The merged-usr
# hook links /bin to /usr/bin as Debian 12 does, without the usrmerge package (and its perl).
BASE_ARGS=(--variant=apt --mode=root --format=tar --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*'
  --dpkgopt='path-exclude=/usr/share/info/*' --aptopt='APT::Install-Recommends "false"')
BASE_SOURCES=("deb $MIRROR/debian $DEBIAN_SUITE main" "deb $MIRROR/debian $DEBIAN_SUITE-updates main"
  "deb $MIRROR/debian-security $DEBIAN_SUITE-security main")

build_base() {
  local sha stamp="$STACK_DIR/containers/base.sha" tar="$STACK_DIR/containers/base.tar"
  sha="$(printf '%s\n' "${BASE_ARGS[@]}" "${BASE_SOURCES[@]}" | sha256sum | cut -d' ' -f1)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sha" ] && podman image exists "$BASE_IMAGE"; then return 0; fi
  say "making the base $BASE_IMAGE: Debian $DEBIAN_SUITE by mmdebstrap"
  rm -f "$tar"
  mmdebstrap "${BASE_ARGS[@]}" "$DEBIAN_SUITE" "$tar" "${BASE_SOURCES[@]}" > "$STACK_DIR/containers/mmdebstrap.log" 2>&1 \
    || { tail -20 "$STACK_DIR/containers/mmdebstrap.log" >&2; die "mmdebstrap failed (log: $STACK_DIR/containers/mmdebstrap.log)"; }
  podman import --quiet --change 'CMD ["/bin/bash"]' "$tar" "$BASE_IMAGE" >/dev/null
  rm -f "$tar"
  echo "$sha" > "$stamp"
}

# --- the contexts: each image's files, built by the project's own builds ----------------------
stage_agents() {
  # the Release tree `make build` builds (mk/c.mk's c-build): only what changed since is compiled
  local b="${C_BUILD:-$ROOT/build/c}" d="$CTX/agents"
  { cmake -S "$ROOT" -B "$b" -DCMAKE_BUILD_TYPE=Release \
      && cmake --build "$b" -j2 --target cpi2-collector cpi2-fleetsim cpi2-enforcer; } > "$CTX/cmake.log" 2>&1 \
    || { tail -30 "$CTX/cmake.log" >&2; die "the agents' CMake build failed (log: $CTX/cmake.log)"; }
  rm -rf "$d"; mkdir -p "$d/bin"
  cp "$b/collectors/collector/cpi2-collector" "$b/collectors/fleetsim/cpi2-fleetsim" "$b/enforcer/cpi2-enforcer" "$d/bin/"
  strip "$d"/bin/*
  cp -r "$ROOT/collectors/fleetsim/scenarios" "$d/scenarios"
}

stage_identity() {
  # k8s's build (`make build` made it: static, the version in it)
  local d="$CTX/identity"
  make --no-print-directory -C "$ROOT/k8s" build >/dev/null
  rm -rf "$d"; mkdir -p "$d"
  cp "$ROOT/build/k8s/cpi2-k8s-identity" "$ROOT/build/k8s/cpi2-issuer" "$d/"
}

# A folder of Maven Central's jars for the Flink image, by docker/flink/pom.xml's PROFILE, kept in
# STACK_DIR/lib/flink-image/<profile>-<the pom's sha> (fetched again when the pom changes).
image_jars() {
  local profile="$1" sha dir
  sha="$(sha256sum "$ROOT/docker/flink/pom.xml" | cut -c1-16)"
  dir="$STACK_DIR/lib/flink-image/$profile-$sha"
  if [ ! -f "$dir/.done" ]; then
    rm -rf "$STACK_DIR/lib/flink-image/$profile-"*; mkdir -p "$dir"
    mvn -q -B -Dstyle.color=never -f "$ROOT/docker/flink/pom.xml" -P"$profile" dependency:copy-dependencies \
      -DoutputDirectory="$dir" -DincludeScope=runtime -DexcludeTransitive=true >&2
    touch "$dir/.done"
  fi
  echo "$dir"
}

stage_flink() {
  local d="$CTX/flink" jar="$ROOT/flink-jobs/target/cpi2-flink-jobs-$VERSION.jar" newer
  # the jar `make build` made, unless a source of it changed since (then Maven builds it again)
  newer=""
  [ -f "$jar" ] && newer="$(find "$ROOT/pom.xml" "$ROOT/flink-jobs/pom.xml" "$ROOT/flink-jobs/src/main" \
    "$ROOT/schemas" -path '*/target' -prune -o -type f -newer "$jar" -print -quit)"
  if [ ! -f "$jar" ] || [ -n "$newer" ]; then
    make --no-print-directory -C "$ROOT/flink-jobs" build >/dev/null
  fi
  [ -f "$jar" ] || die "no $jar after make -C flink-jobs build"
  rm -rf "$d"; mkdir -p "$d/lib" "$d/plugins/s3-fs-presto" "$d/usrlib" "$d/conf" "$d/bin"
  # Flink's jars from Maven Central (stack/jars/pom.xml, profile flink: what the local stack runs)
  # and the image's own (docker/flink/pom.xml: Kubernetes, the Prometheus reporter, S3)
  "$ROOT/stack/setup.sh" >/dev/null
  cp "$STACK_DIR"/lib/flink/*.jar "$(image_jars flink-lib)"/*.jar "$d/lib/"
  cp "$(image_jars plugin-s3-fs-presto)"/*.jar "$d/plugins/s3-fs-presto/"
  cp "$jar" "$d/usrlib/cpi2-flink-jobs.jar"
  cp "$ROOT/stack/flink/jvm-opts" "$ROOT/docker/flink/config.yaml" "$ROOT/docker/flink/log4j-console.properties" \
    "$ROOT/docker/flink/log4j-cli.properties" "$d/conf/"
  cp "$ROOT/docker/flink/entrypoint.sh" "$d/bin/"
}

stage_tools() {
  local d="$CTX/tools"
  rm -rf "$d"; mkdir -p "$d/python" "$d/site" "$d/clickhouse" "$d/schemas"
  (cd "$ROOT/python" && tar --exclude=__pycache__ --exclude='cpi2/testing' --exclude='cpi2/e2e' -cf - cpi2) | tar -xf - -C "$d/python"
  cp -r "$ROOT/clickhouse/migrations" "$ROOT/clickhouse/queries" "$d/clickhouse/"
  cp -r "$ROOT/schemas/avro" "$ROOT/schemas/versions" "$ROOT/schemas/topics.conf" "$d/schemas/"
  # cpi2ctl's two libraries beyond the standard library, the versions of requirements.txt (kept in
  # STACK_DIR/lib/tools-site/<their sha>, installed again when they change)
  local reqs sha site
  reqs="$(grep -E '^(fastavro|confluent-kafka)==' "$ROOT/requirements.txt")"
  sha="$(echo "$reqs" | sha256sum | cut -c1-16)"
  site="$STACK_DIR/lib/tools-site/$sha"
  if [ ! -f "$site/.done" ]; then
    rm -rf "$STACK_DIR/lib/tools-site"; mkdir -p "$site"
    echo "$reqs" | xargs "$ROOT/.venv/bin/pip" install -q --disable-pip-version-check --no-deps --only-binary=:all: --target "$site"
    touch "$site/.done"
  fi
  cp -r "$site/." "$d/site/"
  rm -f "$d/site/.done"
}

image_names() { echo "$IMAGE_TABLE" | awk 'NF {print $1}'; }

build_image() {
  local name="$1" file target ctx
  read -r _ file target ctx < <(echo "$IMAGE_TABLE" | awk -v n="$name" '$1 == n')
  [ -n "${file:-}" ] || die "no image $name (docker/images.sh --list)"
  local args=(-f "$ROOT/docker/$file" -t "cpi2/$name:$VERSION" --build-arg "VERSION=$VERSION")
  [ "$target" = - ] || args+=(--target "$target")
  if [ "$IMAGE_BUILDER" = docker ]; then
    docker build "${args[@]}" "$CTX/$ctx"
  else
    buildah bud --quiet --layers --network host --build-arg "BASE=$BASE_IMAGE" "${args[@]}" "$CTX/$ctx" >/dev/null
  fi
}

main() {
  case "${1:-}" in
    --env) containers_env; echo "export CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF CONTAINERS_CONF=$CONTAINERS_CONF"; return ;;
    --list) echo "$IMAGE_TABLE" | awk 'NF {print "cpi2/" $1 ":'"$VERSION"'", "docker/" $2, $3, $4}'; return ;;
    --stage)
      shift
      local c cs=("$@")
      [ ${#cs[@]} -gt 0 ] || mapfile -t cs < <(echo "$IMAGE_TABLE" | awk 'NF {print $4}' | sort -u)
      mkdir -p "$CTX"
      for c in "${cs[@]}"; do say "staging $c"; "stage_$c"; done
      return ;;
  esac
  local want=("$@") n staged=" "
  [ ${#want[@]} -gt 0 ] || mapfile -t want < <(image_names)
  if [ "$IMAGE_BUILDER" != docker ]; then
    need buildah podman mmdebstrap runc
    containers_env
    build_base
  fi
  mkdir -p "$CTX"
  for n in "${want[@]}"; do
    local ctx; ctx="$(echo "$IMAGE_TABLE" | awk -v n="$n" '$1 == n {print $4}')"
    [ -n "$ctx" ] || die "no image $n (docker/images.sh --list)"
    case "$staged" in *" $ctx "*) ;; *) say "staging $ctx"; "stage_$ctx"; staged="$staged$ctx " ;; esac
    say "building cpi2/$n:$VERSION"
    build_image "$n"
  done
  if [ "$IMAGE_BUILDER" != docker ]; then
    for n in "${want[@]}"; do
      podman image inspect --format "{{.Size}}" "cpi2/$n:$VERSION" \
        | awk -v n="cpi2/$n:$VERSION" '{printf "images: %-28s %6.1f MB\n", n, $1 / 1e6}'
    done
  fi
}

main "$@"
