"""The Avro schemas of schemas/ in Python: parsing and fingerprints (avroschemas), the wire
format (wire), archiving and the C header (schemagen)."""
