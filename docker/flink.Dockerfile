# cpi2/flink-jobs: Flink 2.2.1 (its jars from Maven Central: stack/jars/pom.xml's, as the local
# stack runs, and docker/flink/pom.xml's) with the job jar at /opt/flink/usrlib/cpi2-flink-jobs.jar
# (the chart's pipeline.jarURI local:///opt/flink/usrlib/cpi2-flink-jobs.jar). Context:
# build/images/flink, staged by docker/images.sh (make images). Java 17 from Debian; uid 9999
# (flink), as the chart's FlinkDeployments run it. docker/flink/entrypoint.sh: jobmanager,
# taskmanager, flink (the CLI).
ARG BASE=debian:12.12-slim
FROM ${BASE}
ARG VERSION
# (the JRE's update-alternatives links its manual pages: their folder must exist in a base without them)
RUN mkdir -p /usr/share/man/man1 && apt-get update && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log \
    && groupadd --system --gid 9999 flink && useradd --system --uid 9999 --gid flink --home-dir /opt/flink flink
COPY lib /opt/flink/lib
COPY plugins /opt/flink/plugins
COPY conf /opt/flink/conf
COPY usrlib /opt/flink/usrlib
COPY bin/entrypoint.sh /opt/flink/bin/entrypoint.sh
RUN ln -s /opt/flink/bin/entrypoint.sh /docker-entrypoint.sh \
    && printf '#!/bin/sh\nexec /opt/flink/bin/entrypoint.sh flink "$@"\n' > /usr/local/bin/flink && chmod 0755 /usr/local/bin/flink \
    && mkdir -p /opt/flink/log /opt/flink/state && chown flink:flink /opt/flink/log /opt/flink/state
ENV FLINK_HOME=/opt/flink FLINK_PLUGINS_DIR=/opt/flink/plugins CPI2_VERSION=${VERSION}
LABEL org.opencontainers.image.title="cpi2-flink-jobs" org.opencontainers.image.version="${VERSION}"
USER 9999:9999
WORKDIR /opt/flink
ENTRYPOINT ["/opt/flink/bin/entrypoint.sh"]
CMD ["jobmanager"]
