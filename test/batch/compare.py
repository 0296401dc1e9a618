#!/usr/bin/env python3
"""compare.py A.sqlite B.sqlite: exit 0 if table `runs` holds the same rows in both, every column
compared except wall_time_s and rtf (which depend on the machine); else the differences."""
import sqlite3
import sys


def rows(path):
    db = sqlite3.connect(path)
    cur = db.execute("SELECT * FROM runs ORDER BY run_id")
    names = [d[0] for d in cur.description]
    return names, [{k: v for k, v in zip(names, r) if k not in ("wall_time_s", "rtf")} for r in cur]


na, a = rows(sys.argv[1])
nb, b = rows(sys.argv[2])
if na != nb:
    sys.exit(f"columns differ: {na} vs {nb}")
if len(a) != len(b):
    sys.exit(f"{len(a)} rows vs {len(b)}")
bad = [(x, y) for x, y in zip(a, b) if x != y]
for x, y in bad:
    print(f"differs:\n  {x}\n  {y}")
sys.exit(1 if bad else 0)
