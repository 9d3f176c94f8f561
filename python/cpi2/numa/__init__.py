"""NUMA (issue 22): a machine's topology (sysfs or a described machine), the scheduling concerns
and important placements of seed 001 section 4 (`placements`), a placement trial (`trial`), and
placement advice from the interference history (`advise`). CLI: `python -m cpi2.numa`."""
