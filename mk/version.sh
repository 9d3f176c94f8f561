#!/bin/sh
# The project's version: the Helm chart's appVersion, which tags the images. The C and Go builds
# bake it into their programs (--version); pom.xml and pyproject.toml carry the same
# (docker/tests/test_images.py checks).
exec sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$(dirname "$0")/../deploy/helm/cpi2/Chart.yaml"
