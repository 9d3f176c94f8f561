#!/usr/bin/env python3
"""The same RowBinary and JSONEachRow bytes that flink-jobs' ClickHouseFormatsIT made for the local
ClickHouse (18.16), on a current ClickHouse: chdb-core in-process, with clickhouse/migrations
applied to two databases (so the String columns are LowCardinality(String) there).

  chdb_formats_check.py DIR

DIR holds, per table named in DIR/tables: TABLE.RowBinary (rows for the columns listed one per
line in TABLE.columns), TABLE.JSONEachRow and TABLE.rows (how many rows each holds). Each file goes
into its own database; every column (materialized ones too) is read back with FORMAT JSONEachRow
and the two outputs must be the same text. Writes TABLE.chdb-columns (name, type, default_kind of
the table on this server, tab-separated) for the IT to compile its encoders against. Exit status
1 if any table differs."""

import pathlib
import sys

from cpi2.clickhouse import chclient, schema


def main(directory):
    d = pathlib.Path(directory).resolve()
    ch = chclient.ChdbClickHouse()
    print("chdb-core", ch.query("SELECT version()").strip())
    for db in ("rb", "js"):
        schema.apply(ch, db, log=lambda *_: None)
    failed = False
    for table in (d / "tables").read_text().split():
        columns = (d / f"{table}.columns").read_text().split()
        rows = int((d / f"{table}.rows").read_text())
        listed = ", ".join(f"`{c}`" for c in columns)
        ch.query(f"INSERT INTO rb.{table} ({listed}) FROM INFILE '{d / (table + '.RowBinary')}' FORMAT RowBinary")
        ch.query(
            f"INSERT INTO js.{table} FROM INFILE '{d / (table + '.JSONEachRow')}'"
            " SETTINGS input_format_skip_unknown_fields=1 FORMAT JSONEachRow"
        )
        described = ch.query(
            f"SELECT name, type, default_kind FROM system.columns WHERE database = 'rb' AND table = '{table}'",
            "TabSeparatedRaw",
        )
        (d / f"{table}.chdb-columns").write_text(described)
        every = ", ".join(f"`{line.split(chr(9))[0]}`" for line in described.splitlines())
        select = (
            f"SELECT {every} FROM {{db}}.{table} ORDER BY {every} SETTINGS output_format_json_quote_64bit_integers = 0"
        )
        got = {db: ch.query(select.format(db=db), "JSONEachRow") for db in ("rb", "js")}
        counts = {db: text.count("\n") for db, text in got.items()}  # not splitlines(): strings hold U+2028
        same = got["rb"] == got["js"] and counts["rb"] == rows
        failed |= not same
        print(
            f"{table}: {counts['rb']} rows from RowBinary, {counts['js']} from JSONEachRow (expected {rows}):"
            f" {'the same' if same else 'DIFFERENT'}"
        )
        if not same:
            for a, b in zip(got["rb"].split("\n"), got["js"].split("\n")):
                if a != b:
                    print(f"  RowBinary:   {a}\n  JSONEachRow: {b}")
                    break
    ch.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
