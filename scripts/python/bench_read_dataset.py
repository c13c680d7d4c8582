"""Times a group-by over a kline dataset directory with DuckDB, pyarrow and Polars (best of N).

Usage: bench_read_dataset.py DIR [DIR ...]   (each DIR is a dataset root; DIR/kline is read)
Prints JSON: {DIR: {"duckdb": s, "pyarrow": s, "polars": s, "files": n}}.
"""
import glob
import json
import sys
import time

import duckdb
import polars as pl
import pyarrow.dataset as ds

REPEAT = 5


def best(fn):
    times = []
    for _ in range(REPEAT):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bench(root):
    kline = f"{root}/kline"
    files = glob.glob(f"{kline}/**/*.parquet", recursive=True)
    con = duckdb.connect()
    duck = lambda: con.execute(
        f"select code, count(*), max(close) from read_parquet('{kline}/**/*.parquet', hive_partitioning=true) group by code"
    ).fetchall()
    arrow = lambda: ds.dataset(kline, format="parquet", partitioning="hive").to_table().group_by("code").aggregate(
        [("close", "max")]
    )
    polars = lambda: pl.scan_parquet(f"{kline}/**/*.parquet", hive_partitioning=True).group_by("code").agg(
        pl.len(), pl.col("close").max()
    ).collect()
    return {"files": len(files), "duckdb": best(duck), "pyarrow": best(arrow), "polars": best(polars)}


print(json.dumps({root: bench(root) for root in sys.argv[1:]}))
