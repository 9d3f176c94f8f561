"""Helpers for tests over the real local stack: its addresses and Kafka principals (stack), a
throw-away ClickHouse database with the fixture rows (fixtures)."""
