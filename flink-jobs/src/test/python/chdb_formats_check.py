#!/usr/bin/env python3
"""The same RowBinary bytes that flink-jobs' ClickHouseFormatsIT made for the local ClickHouse
(18.16), on a current ClickHouse: chdb-core in-process, with clickhouse/migrations applied (so the
String columns are LowCardinality(String) there).

  chdb_formats_check.py DIR

DIR holds, per table named in DIR/tables: TABLE.RowBinary (rows for the columns listed one per
line in TABLE.columns) and TABLE.rows (how many rows it holds). The rows are inserted and the
listed columns read back with FORMAT JSONEachRow into TABLE.chdb-rows, for the IT to compare with
the records' values. Writes TABLE.chdb-columns (name, type, default_kind of the table on this
server, tab-separated) for the IT to compile its encoders against. Exit status 1 if a table holds
another number of rows than it was given."""

import pathlib
import sys

from cpi2.clickhouse import chclient, schema


def main(directory):
    d = pathlib.Path(directory).resolve()
    ch = chclient.ChdbClickHouse()
    print("chdb-core", ch.query("SELECT version()").strip())
    schema.apply(ch, "rb", log=lambda *_: None)
    failed = False
    for table in (d / "tables").read_text().split():
        columns = (d / f"{table}.columns").read_text().split()
        rows = int((d / f"{table}.rows").read_text())
        listed = ", ".join(f"`{c}`" for c in columns)
        ch.query(f"INSERT INTO rb.{table} ({listed}) FROM INFILE '{d / (table + '.RowBinary')}' FORMAT RowBinary")
        described = ch.query(
            f"SELECT name, type, default_kind FROM system.columns WHERE database = 'rb' AND table = '{table}'",
            "TabSeparatedRaw",
        )
        (d / f"{table}.chdb-columns").write_text(described)
        got = ch.query(
            f"SELECT {listed} FROM rb.{table} SETTINGS output_format_json_quote_64bit_integers = 0", "JSONEachRow"
        )
        (d / f"{table}.chdb-rows").write_text(got)
        count = got.count("\n")  # not splitlines(): strings hold U+2028
        failed |= count != rows
        print(f"{table}: {count} rows from RowBinary (expected {rows})")
    ch.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
