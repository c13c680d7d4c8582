"""Reads a kline Delta table with delta-rs (its newest version) for `pnpm bench soak`'s final check
and prints one TSV line per row: code, kline_type, ts (epoch ms), close, read_at (epoch ms), then a
last line `#version N files F`.

Usage: soak_read_kline.py DIR/kline
"""
import sys

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable

table_dir = sys.argv[1]
dt = DeltaTable(table_dir)
t = dt.to_pyarrow_table(columns=["code", "kline_type", "ts", "close", "read_at"])
ms = lambda col: pc.cast(pc.cast(t[col], pa.timestamp("ms", tz="UTC")), pa.int64())  # noqa: E731
columns = [t["code"], pc.cast(t["kline_type"], pa.int64()), ms("ts"), t["close"], ms("read_at")]
out = sys.stdout
for code, kt, ts, close, read_at in zip(*(c.to_pylist() for c in columns)):
    out.write(f"{code}\t{kt}\t{ts}\t{close!r}\t{read_at}\n")
out.write(f"#version {dt.version()} files {len(dt.file_uris())}\n")
