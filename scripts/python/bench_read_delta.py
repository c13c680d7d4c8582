"""Times reading kline Delta tables (local or on S3) with delta-rs, Polars' scan_delta and DuckDB's
delta extension against the same rows in one local Parquet file read by pyarrow, Polars and DuckDB
(best of N; DuckDB 1.4.4 in its own venv, test/python/read_duckdb_delta.py).

Usage: bench_read_delta.py < SPEC.json, SPEC = {"s3": {"endpoint", "access_key_id",
"secret_access_key", "region"}, "tables": {NAME: PATH}, "file": PATH, "fileS3": S3PATH, "repeat": N}: a PATH starting
s3:// is read from the S3-compatible server `s3` (plain HTTP, path-style). The tables named in
"checkpoint" (a list) are first given a Delta checkpoint by delta-rs (create_checkpoint).
Each read is the same group-by (code: count, max close), the table opened anew each time (its log
read too); the delta-rs, Polars and pyarrow reads of the tables and files on one storage take
turns, round after round (best of N each), so the host's noise falls on a table and its baseline
alike. "fileS3" (optional): the same rows as one object on the server, read as "file" is (pyarrow's
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


def best_interleaved(fns, repeat):
    """Each function's best time and last result, the functions called in turn `repeat` times
    (round after round, not one function's calls in a block): a burst of load on the shared host
    slows a table and its baseline alike, instead of one of them."""
    times = {name: [] for name in fns}
    outs = {}
    for _ in range(repeat):
        for name, fn in fns.items():
            t = time.perf_counter()
            outs[name] = fn()
            times[name].append(time.perf_counter() - t)
    return {name: (min(ts), outs[name]) for name, ts in times.items()}


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


def table_reads(path, s3):
    """delta-rs' and Polars' reads of a table (for `best_interleaved`)."""
    opts = options(path, s3)
    return {
        "deltalake": lambda: group_arrow(DeltaTable(path, storage_options=opts).to_pyarrow_table()),
        "polars": lambda: group_polars(pl.scan_delta(path, storage_options=opts)),
    }


def bench_table(path, s3, repeat, timed):
    """`timed`: delta-rs' and Polars' (best, result) for the table, from `best_interleaved`."""
    (t_rs, g), (t_pl, p) = timed["deltalake"], timed["polars"]
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


def file_reads(path, s3=None):
    """pyarrow's and Polars' reads of one Parquet file (local, or one object of the S3 server `s3`)."""
    if path.startswith("s3://"):
        fs = arrow_fs(s3)
        opts = {k.lower(): v for k, v in storage_options(s3).items()}
        return {
            "pyarrow": lambda: group_arrow(pq.read_table(path[len("s3://"):], filesystem=fs)),
            "polars": lambda: group_polars(pl.scan_parquet(path, storage_options=opts)),
        }
    return {"pyarrow": lambda: group_arrow(pq.read_table(path)), "polars": lambda: group_polars(pl.scan_parquet(path))}


def bench_file(path, repeat, timed, s3=None):
    """One Parquet file: `timed` holds pyarrow's and Polars' (best, result); DuckDB's is read here."""
    remote = path.startswith("s3://")
    (t_pa, g), (t_pl, p) = timed["pyarrow"], timed["polars"]
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
    s3 = spec.get("s3")
    # delta-rs' and Polars' reads of every table and file, interleaved with those on the same
    # storage only (an S3 read leaves the server's JVM busy after it answers, which a local read
    # would pay for); DuckDB's run in its own venv.
    files = {"file": (spec["file"], None)}
    if spec.get("fileS3") is not None:
        files["fileS3"] = (spec["fileS3"], s3)
    groups = {False: {}, True: {}}
    for name, path in spec["tables"].items():
        groups[path.startswith("s3://")].update({(name, r): fn for r, fn in table_reads(path, s3).items()})
    for name, (path, where) in files.items():
        groups[where is not None].update({(name, r): fn for r, fn in file_reads(path, where).items()})
    timed = {}
    for reads in groups.values():
        timed.update(best_interleaved(reads, repeat))
    of = lambda name: {r: v for (n, r), v in timed.items() if n == name}
    out = {name: bench_table(path, s3, repeat, of(name)) for name, path in spec["tables"].items()}
    for name, (path, where) in files.items():
        out[name] = bench_file(path, repeat, of(name), where)
    json.dump(out, sys.stdout)

main()
