# cpi2-k8s-identity (the chart's images.identity). Context: build/images/identity, staged by
# docker/images.sh (make images): the static binary of k8s/identity (CGO_ENABLED=0), the
# version in it. Nothing else: no shell, no libraries; uid 65532, as the chart runs it.
FROM scratch
ARG VERSION
COPY cpi2-k8s-identity cpi2-issuer /usr/local/bin/
LABEL org.opencontainers.image.title="cpi2-k8s-identity" org.opencontainers.image.version="${VERSION}"
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/cpi2-k8s-identity"]
