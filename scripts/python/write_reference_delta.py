"""Writes the rows of one kline Parquet file as a Delta table by delta-rs itself: the readers' floor
in the upkeep bench (packages/sinks/bench/upkeep.bench.ts), what the same rows cost as the simplest
table a reference writer leaves (one data file, one JSON commit, partitioned as quoteflow's kline
table: the file's `kline_type=…/month=…` directories become its partition columns).

Usage: write_reference_delta.py FILE TABLE_DIR (a local directory, created).
"""
import re
import sys

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import write_deltalake


def main():
    file, table = sys.argv[1], sys.argv[2]
    parts = dict(re.findall(r"(kline_type|month)=([^/]+)", file))
    rows = pq.read_table(file)
    rows = rows.append_column("kline_type", pa.array([int(parts["kline_type"])] * rows.num_rows, pa.int32()))
    rows = rows.append_column("month", pa.array([parts["month"]] * rows.num_rows, pa.string()))
    write_deltalake(table, rows, partition_by=["kline_type", "month"])


main()
