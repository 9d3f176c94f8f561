#!/bin/bash
# Builds the CPI2 Flink job jar from the sources mounted read-only at SRC (the modules of the root
# pom.xml, without build outputs) and copies it to OUT. docker-compose.yml runs it once in the
# maven image; the local Maven repository is a volume, so later runs are quick.
#   build-flink-job.sh SRC OUT
set -euo pipefail
src=${1:?usage: build-flink-job.sh SRC OUT}
out=${2:?usage: build-flink-job.sh SRC OUT}
work=$(mktemp -d)
for p in pom.xml schemas flink-jobs it/smoke-job; do
  mkdir -p "$work/$(dirname "$p")"
  cp -r "$src/$p" "$work/$p"
done
find "$work" -name target -type d -prune -exec rm -rf {} +
mvn -B -q -Dstyle.color=never -f "$work/pom.xml" -pl flink-jobs -am package -DskipTests
mkdir -p "$out"
cp "$work/flink-jobs/target/cpi2-flink-jobs-0.1.0.jar" "$out/"
echo "build-flink-job: $out/cpi2-flink-jobs-0.1.0.jar" >&2
