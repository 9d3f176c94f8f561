"""The ClickHouse tools: the client (chclient), the migrations (schema, apply), the forensics
queries (forensics) and their bench. The SQL lives in clickhouse/ at the repository root."""
