"""cpi2: the project's Python package (see python/README.md).

Subpackages: cli (cpi2ctl), clickhouse (schema, forensics queries, clients), grafana (dashboard
generator), schemas (Avro schemas, the wire format, schemagen), e2e (pipeline runs, benches, the
demo), testing (helpers for tests over the real local stack). cpi2.repo knows where the repository
and the local stack are; cpi2.names holds the topic names and enum symbols generated from schemas/.

cpi2, cpi2.repo, cpi2.schemas and cpi2.clickhouse's schema tools need only the standard library:
the C build and the docker-compose schema job run them with a plain python3."""
