# The host agents' images. Context: build/images/agents, staged by docker/images.sh (make images):
# bin/ the programs of the project's CMake build (Release), scenarios/ the fleet simulator's.
# Targets:
#   collector  cpi2-collector and cpi2-fleetsim (+ scenarios): cpi2/collectors (chart, compose)
#   enforcer   cpi2-enforcer: cpi2/enforcer
# Both run as uid 0: perf_event_open on every cgroup needs a capability, which Kubernetes gives
# no other uid, and the cgroup files the enforcer writes are root's (enforcer/README.md).
ARG BASE=debian:12.12-slim
FROM ${BASE} AS runtime
ARG VERSION
# the shared libraries, no compiler; openssl for docker-compose's kafka-secrets one-shot
RUN apt-get update && apt-get install -y --no-install-recommends libavro23 librdkafka1 libjansson4 openssl \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log
LABEL org.opencontainers.image.version="${VERSION}"

FROM runtime AS collector
COPY bin/cpi2-collector bin/cpi2-fleetsim /usr/local/bin/
COPY scenarios /opt/cpi2/scenarios
LABEL org.opencontainers.image.title="cpi2-collector"
ENTRYPOINT ["cpi2-collector"]
CMD ["--help"]

FROM runtime AS enforcer
COPY bin/cpi2-enforcer /usr/local/bin/
LABEL org.opencontainers.image.title="cpi2-enforcer"
VOLUME /var/lib/cpi2-enforcer
ENTRYPOINT ["cpi2-enforcer"]
CMD ["--help"]
