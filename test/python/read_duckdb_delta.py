"""Reads a Delta table with DuckDB's delta extension and prints JSON on stdout, as read_dataset.py's
readers do (it runs this for its `duckdb-delta` reader).

Runs on .cache/duckdb-delta's Python (scripts/python/duckdb-delta.sh: DuckDB 1.4.4 with the delta
and httpfs extensions from PyPI, loaded from their packages: nothing is downloaded).
stdin: {"path", "version", "s3"} as a read_dataset.py request: a table's directory or
s3://BUCKET/PREFIX on the S3-compatible server "s3" (plain HTTP, path-style), at its newest
version or at "version" (time travel: ATTACH ... (TYPE delta, VERSION n)).
stdout: {"reader": "duckdb-delta", "columns": [{"name", "type"}], "rows": [...]}, values normalised
by read_dataset.norm. With "bench": N (scripts/python/bench_read_delta.py), times N group-bys of
the table (or of a local .parquet file with read_parquet) and prints {"duckdb": best s, "rows"}; a
table also gets "pinned": the best of N group-bys of it attached once with PIN_SNAPSHOT.
"""
import glob
import json
import os
import sys
import time
from urllib.parse import urlparse

import duckdb
import duckdb_ext

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from read_dataset import norm  # noqa: E402


def load_extensions(con):
    for name in ("httpfs", "delta"):
        found = [p for base in duckdb_ext.__path__ for p in glob.glob(os.path.join(base, "extensions", "*", "*", f"{name}.duckdb_extension"))]
        if not found:
            raise SystemExit(f"DuckDB's {name} extension is not installed (run scripts/python/duckdb-delta.sh)")
        con.execute(f"LOAD '{found[0]}'")


def quote(s):
    return "'" + str(s).replace("'", "''") + "'"


def connect(s3):
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    load_extensions(con)
    if s3 is not None:
        endpoint = urlparse(s3["endpoint"])
        con.execute(
            "CREATE SECRET s3 (TYPE s3, "
            f"KEY_ID {quote(s3['access_key_id'])}, SECRET {quote(s3['secret_access_key'])}, "
            f"REGION {quote(s3['region'])}, ENDPOINT {quote(endpoint.netloc)}, "
            f"URL_STYLE 'path', USE_SSL {str(endpoint.scheme == 'https').lower()})"
        )
    return con


def attach(con, path, version=None):
    at = "" if version is None else f", VERSION {int(version)}"
    con.execute(f"ATTACH {quote(path)} AS t (TYPE delta{at})")


def bench(con, req):
    """The Delta bench's group-by (code: count, max close), the table attached anew each time."""
    group = "SELECT code, count(*) AS n, max(close) FROM {} GROUP BY code"
    times = []
    for _ in range(req["bench"]):
        t = time.perf_counter()
        if req["path"].endswith(".parquet"):
            rows = con.sql(group.format(f"read_parquet({quote(req['path'])})")).fetchall()
        else:
            attach(con, req["path"])
            rows = con.sql(group.format("t")).fetchall()
            con.execute("DETACH t")
        times.append(time.perf_counter() - t)
    out = {"duckdb": min(times), "rows": sum(r[1] for r in rows)}
    if not req["path"].endswith(".parquet"):
        # The table attached once with its snapshot pinned: the log is read (and the extension's
        # HTTP client built) at the ATTACH, not at every query.
        con.execute(f"ATTACH {quote(req['path'])} AS p (TYPE delta, PIN_SNAPSHOT)")
        pinned = []
        for _ in range(req["bench"]):
            t = time.perf_counter()
            con.sql(group.format("p")).fetchall()
            pinned.append(time.perf_counter() - t)
        con.execute("DETACH p")
        out["pinned"] = min(pinned)
    json.dump(out, sys.stdout)


def main():
    req = json.load(sys.stdin)
    con = connect(req.get("s3"))
    if req.get("bench"):
        bench(con, req)
        return
    attach(con, req["path"], req.get("version"))
    rel = con.sql("SELECT * FROM t")
    cols = [{"name": n, "type": str(t)} for n, t in zip(rel.columns, rel.types)]
    rows = [norm(dict(zip(rel.columns, r))) for r in rel.fetchall()]
    json.dump({"reader": "duckdb-delta", "columns": cols, "rows": rows}, sys.stdout, allow_nan=False)


main()
