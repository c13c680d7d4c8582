"""Times reading kline Delta tables (local or on S3) with delta-rs, Polars' scan_delta and DuckDB's
delta extension against the same rows in one local Parquet file read by pyarrow, Polars and DuckDB
(best of N; DuckDB 1.4.4 in its own venv, test/python/read_duckdb_delta.py).

Usage: bench_read_delta.py < SPEC.json, SPEC = {"s3": {"endpoint", "access_key_id",
"secret_access_key", "region"}, "tables": {NAME: PATH}, "file": PATH, "fileS3": S3PATH, "repeat": N}: a PATH starting
s3:// is read from the S3-compatible server `s3` (plain HTTP, path-style). The tables named in
"checkpoint" (a list) are first given a Delta checkpoint by delta-rs (create_checkpoint).
Each read is the same group-by (code: count, max close), the table opened anew each time (its log
read too). "fileS3" (optional): the same rows as one object on the server, read as "file" is (pyarrow's
S3 file system, Polars' storage_options, DuckDB's S3 secret). Prints JSON: {NAME: {"deltalake": s,
"polars": s, "duckdb": s, "rows": n}, "file": {...}, "fileS3": {...}}; what is read from S3 over plain
HTTP also has "duckdbWithoutCaRoots": DuckDB's time when its process finds no CA certificates; a table
has "duckdbPinned": DuckDB's group-by of it attached once with PIN_SNAPSHOT.
"""
import json
import os
import subprocess
import sys
import time

import polars as pl
import pyarrow.parquet as pq
from deltalake import DeltaTable

# The interop tests' reader settings for an S3-compatible server, so the bench reads as they do.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "python"))
from read_dataset import storage_options  # noqa: E402


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def options(path, s3):
    return storage_options(s3) if path.startswith("s3://") else None


def group_arrow(table):
    return table.group_by("code").aggregate([("close", "max"), ("close", "count")])

def group_polars(lf):
    return lf.group_by("code").agg(pl.len(), pl.col("close").max()).collect()

HERE = os.path.dirname(os.path.abspath(__file__))
TEST_PYTHON = os.path.join(HERE, "..", "..", "test", "python")


def duckdb_best(path, s3, repeat, without_ca_roots=False):
    """DuckDB's best time (its own process and venv: scripts/python/duckdb-delta.sh). With
    `without_ca_roots` (a plain-HTTP server only), its process finds no CA certificates: the delta
    extension builds an HTTP client at every scan, loading the system's CA roots each time, which
    on S3 costs more than reading the whole object (BENCHMARKS.md, table upkeep)."""
    python = os.path.join(HERE, "..", "..", ".cache", "duckdb-delta", "bin", "python")
    req = json.dumps({"path": path, "s3": s3 if path.startswith("s3://") else None, "bench": repeat})
    env = dict(os.environ)
    if without_ca_roots:
        env["SSL_CERT_FILE"] = os.devnull
        env["SSL_CERT_DIR"] = os.path.join(os.devnull, "none")
    run = subprocess.run(
        [python, os.path.join(TEST_PYTHON, "read_duckdb_delta.py")], input=req, capture_output=True, text=True, env=env
    )
    if run.returncode != 0:
        raise SystemExit(f"read_duckdb_delta.py: {run.stderr.strip()[-2000:]}")
    return json.loads(run.stdout)


def without_ca_roots(path, s3):
    """Whether to time DuckDB also without the system's CA roots: S3 over plain HTTP only."""
    return path.startswith("s3://") and s3["endpoint"].startswith("http://")


def bench_table(path, s3, repeat):
    opts = options(path, s3)
    t_rs, g = best(lambda: group_arrow(DeltaTable(path, storage_options=opts).to_pyarrow_table()), repeat)
    t_pl, p = best(lambda: group_polars(pl.scan_delta(path, storage_options=opts)), repeat)
    duck = duckdb_best(path, s3, repeat)
    rows = int(sum(g.column("close_count").to_pylist()))
    if rows != int(p["len"].sum()) or rows != duck["rows"]:
        raise SystemExit(f"{path}: delta-rs read {rows} rows, Polars {int(p['len'].sum())}, DuckDB {duck['rows']}")
    out = {"deltalake": t_rs, "polars": t_pl, "duckdb": duck["duckdb"], "duckdbPinned": duck["pinned"], "rows": rows}
    if without_ca_roots(path, s3):
        out["duckdbWithoutCaRoots"] = duckdb_best(path, s3, repeat, without_ca_roots=True)["duckdb"]
    return out

def arrow_fs(s3):
    """pyarrow's S3 file system for the server `s3` (plain HTTP, path-style)."""
    from pyarrow import fs
    from urllib.parse import urlparse

    endpoint = urlparse(s3["endpoint"])
    return fs.S3FileSystem(
        access_key=s3["access_key_id"],
        secret_key=s3["secret_access_key"],
        region=s3["region"],
        endpoint_override=endpoint.netloc,
        scheme=endpoint.scheme,
        force_virtual_addressing=False,
    )


def bench_file(path, repeat, s3=None):
    """One Parquet file (local, or one object of the S3 server `s3`): pyarrow, Polars, DuckDB."""
    remote = path.startswith("s3://")
    if remote:
        fs = arrow_fs(s3)
        read = lambda: pq.read_table(path[len("s3://"):], filesystem=fs)
        opts = {k.lower(): v for k, v in storage_options(s3).items()}
        scan = lambda: pl.scan_parquet(path, storage_options=opts)
    else:
        read = lambda: pq.read_table(path)
        scan = lambda: pl.scan_parquet(path)
    t_pa, g = best(lambda: group_arrow(read()), repeat)
    t_pl, p = best(lambda: group_polars(scan()), repeat)
    duck = duckdb_best(path, s3 if remote else None, repeat)
    out = {"pyarrow": t_pa, "polars": t_pl, "duckdb": duck["duckdb"], "rows": int(sum(g.column("close_count").to_pylist()))}
    if remote and without_ca_roots(path, s3):
        out["duckdbWithoutCaRoots"] = duckdb_best(path, s3, repeat, without_ca_roots=True)["duckdb"]
    return out

def main():
    spec = json.load(sys.stdin)
    repeat = spec.get("repeat", 5)
    for name in spec.get("checkpoint", []):
        path = spec["tables"][name]
        DeltaTable(path, storage_options=options(path, spec.get("s3"))).create_checkpoint()
    out = {name: bench_table(path, spec.get("s3"), repeat) for name, path in spec["tables"].items()}
    out["file"] = bench_file(spec["file"], repeat)
    if spec.get("fileS3") is not None:
        out["fileS3"] = bench_file(spec["fileS3"], repeat, spec.get("s3"))
    json.dump(out, sys.stdout)

main()
