"""What the lab's program tests (test_victim.py, test_load.py) share."""

import csv
import math


def nearest_rank(values, q):
    v = sorted(values)
    return v[max(1, min(len(v), math.ceil(q / 100 * len(v)))) - 1]


def int_rows(path):
    """A CSV file of integers: one {column: int} per line."""
    with open(path) as f:
        return [{k: int(v) for k, v in r.items()} for r in csv.DictReader(f)]
