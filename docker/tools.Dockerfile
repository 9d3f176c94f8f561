# cpi2/tools: the operator CLI cpi2ctl and the ClickHouse migrations with their apply tool
# (python3 -m cpi2.clickhouse.apply, as the chart's schema Job runs it). Context:
# build/images/tools, staged by docker/images.sh (make images): python/cpi2 (without the test
# and end-to-end helpers), clickhouse/migrations and queries (cpi2ctl's forensics), schemas/ (the Avro schemas cpi2ctl encodes
# with), site/ (fastavro and confluent-kafka, the versions of requirements.txt).
# The repository's layout under /opt/cpi2 (CPI2_ROOT), so the tools find their files; uid 65532.
ARG BASE=debian:12.12-slim
FROM ${BASE}
ARG VERSION
RUN apt-get update && apt-get install -y --no-install-recommends python3 \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log
COPY site /opt/cpi2/site
COPY python /opt/cpi2/python
COPY clickhouse /opt/cpi2/clickhouse
COPY schemas /opt/cpi2/schemas
RUN printf '#!/bin/sh\nexec python3 -m cpi2.cli "$@"\n' > /usr/local/bin/cpi2ctl && chmod 0755 /usr/local/bin/cpi2ctl \
    && python3 -m compileall -q /opt/cpi2/python /opt/cpi2/site
ENV CPI2_ROOT=/opt/cpi2 PYTHONPATH=/opt/cpi2/python:/opt/cpi2/site PYTHONDONTWRITEBYTECODE=1
LABEL org.opencontainers.image.title="cpi2-tools" org.opencontainers.image.version="${VERSION}"
USER 65532:65532
WORKDIR /opt/cpi2
ENTRYPOINT ["cpi2ctl"]
CMD ["--help"]
