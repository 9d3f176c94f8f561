# The host agents' images, from one build stage (libcpi2 compiled once for all of them).
# Build context: the repository root (.dockerignore lets in only what the stage copies).
# Targets (docker-compose.yml: build.target):
#   collector  cpi2-collector and cpi2-fleetsim (+ scenarios): services collector and fleetsim
#   enforcer   cpi2-enforcer: service enforcer
#   docker build -f docker/agents.Dockerfile --target collector -t cpi2/collectors:0.1.0 .
#   docker build -f docker/agents.Dockerfile --target enforcer -t cpi2/enforcer:0.1.0 .
FROM debian:12.12-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
        build-essential cmake pkg-config python3 libavro-dev librdkafka-dev libjansson-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY python/cpi2 python/cpi2
COPY schemas/versions schemas/versions
COPY schemas/topics.conf schemas/topics.conf
COPY libcpi2 libcpi2
COPY collectors collectors
COPY enforcer enforcer
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release \
    && cmake --build /build -j2 --target cpi2-collector cpi2-fleetsim cpi2-enforcer

# What every agent needs at run time: the shared libraries, no compiler; openssl for
# docker-compose's kafka-secrets one-shot, which runs in the collector image.
FROM debian:12.12-slim AS runtime
RUN apt-get update && apt-get install -y --no-install-recommends libavro23 librdkafka1 libjansson4 openssl \
    && rm -rf /var/lib/apt/lists/*

FROM runtime AS collector
COPY --from=build /build/collectors/collector/cpi2-collector /build/collectors/fleetsim/cpi2-fleetsim /usr/local/bin/
COPY collectors/fleetsim/scenarios /opt/cpi2/scenarios
ENTRYPOINT ["cpi2-collector"]
CMD ["--help"]

FROM runtime AS enforcer
COPY --from=build /build/enforcer/cpi2-enforcer /usr/local/bin/
VOLUME /var/lib/cpi2-enforcer
ENTRYPOINT ["cpi2-enforcer"]
CMD ["--help"]
