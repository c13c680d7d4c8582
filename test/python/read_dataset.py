"""Reads a quoteflow dataset file or directory with one real reader and prints JSON on stdout.

Usage: read_dataset.py READER PATH [--hive] [--format parquet|arrow|ndjson]
       read_dataset.py batch < REQUESTS.json
       read_dataset.py serve
  READER: pyarrow | polars | duckdb | spark | deltalake | polars-delta | spark-delta | duckdb-delta
          | parquet-meta
  PATH:   one file, or a directory read as one Hive-partitioned table with --hive; for the Delta
          readers (delta-rs, Polars' read_delta, Spark with delta-spark, DuckDB's delta extension
          through read_duckdb_delta.py) a table's directory, read
          at its newest version or at --version N (time travel); for them also s3://BUCKET/PREFIX
          with a request's "s3" ({"endpoint", "access_key_id", "secret_access_key", "region"}:
          an S3-compatible server over plain HTTP, path-style): delta-rs and Polars through
          storage_options, Spark through Hadoop's S3A (s3a://, jars from scripts/python/s3a-jars.sh),
          DuckDB through an S3 secret
  batch:  a JSON list of {"reader", "path", "hive", "format", "version", "s3"} on stdin, answered by a JSON list in
          the same order from one process (Spark starts its JVM once, not once per read)
  serve:  listens on 127.0.0.1 (prints "listening PORT"), and answers each connection's one line,
          a JSON list of requests as for batch, with one line: {"ok": [answers]} or {"error": "..."};
          one connection at a time. Spark's JVM starts on the first Spark read and serves every
          later one. Exits when its stdin closes (the test run's shared fixtures own it).

Output: {"reader", "columns": [{"name", "type"}], "rows": [{...}]} where each reader names types in
its own words (pyarrow: "timestamp[ms, tz=UTC]", polars: "Datetime(time_unit='ms', time_zone='UTC')",
duckdb: "TIMESTAMP WITH TIME ZONE", spark: "timestamp"). Values are normalised so JavaScript can
compare them exactly: timestamps as epoch milliseconds, dates as YYYY-MM-DD, integers and integral
decimals as decimal strings (int64 and uint64 exceed 2**53), floats as numbers, nulls as null.
parquet-meta prints each column's physical/logical type and encodings.
"""
import datetime as _dt
import decimal
import glob
import json
import os
import sys
import threading

EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def norm(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            raise SystemExit("naive datetime: the reader lost the UTC time zone")
        return (v - EPOCH) // _dt.timedelta(milliseconds=1)
    if isinstance(v, _dt.date):
        return v.isoformat()
    if isinstance(v, int):
        return str(v)
    if isinstance(v, decimal.Decimal):
        if v != v.to_integral_value():
            raise SystemExit(f"non-integral decimal {v}: expected only uint64 values as decimals")
        return str(int(v))
    if isinstance(v, float):
        return v if v == v else "NaN"
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    return v


def files_of(path, ext):
    return sorted(glob.glob(os.path.join(path, "**", "*." + ext), recursive=True))


def read_pyarrow(path, hive, fmt):
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    ds_format = {"arrow": "ipc", "ndjson": "json"}.get(fmt, fmt)
    if hive:
        table = ds.dataset(path, format=ds_format, partitioning="hive").to_table()
    elif fmt == "ndjson":
        table = ds.dataset(path, format="json").to_table()
    elif fmt == "arrow":
        with pa.memory_map(path) as src:
            table = pa.ipc.open_file(src).read_all()
    else:
        table = pq.read_table(path)
    cols = [{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in table.schema]
    return cols, table.to_pylist()


# A Hive-partitioned table's data files: those under its partition directories (`key=value/`), not
# the Delta checkpoints in `_delta_log/` (`**/*.parquet` from the table's root would match them).
def hive_glob(path, ext):
    return os.path.join(path, "*=*", "**", "*." + ext)


def read_polars(path, hive, fmt):
    import polars as pl

    if fmt == "arrow":
        df = pl.scan_ipc(hive_glob(path, "arrow") if hive else path, hive_partitioning=hive).collect()
    elif fmt == "ndjson":
        # scan_ndjson has no Hive partitioning: the files' own columns only. It infers the types
        # from the first file's first rows and applies them to every file.
        df = pl.scan_ndjson(files_of(path, "ndjson") if hive else path).collect()
    elif hive:
        df = pl.scan_parquet(hive_glob(path, "parquet"), hive_partitioning=True).collect()
    else:
        df = pl.read_parquet(path)
    cols = [{"name": n, "type": str(t)} for n, t in df.schema.items()]
    return cols, df.to_dicts()


def read_duckdb(path, hive, fmt):
    import duckdb

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    ext = "ndjson" if fmt == "ndjson" else "parquet"
    src = hive_glob(path, ext) if hive else path
    fn = "read_json_auto" if fmt == "ndjson" else "read_parquet"
    extra = ", format = 'newline_delimited'" if fmt == "ndjson" else ""
    rel = con.sql(f"SELECT * FROM {fn}('{src}', hive_partitioning = {str(hive).lower()}{extra})")
    cols = [{"name": n, "type": str(t)} for n, t in zip(rel.columns, rel.types)]
    rows = [dict(zip(rel.columns, r)) for r in rel.fetchall()]
    return cols, rows


_spark = None


def spark_session():
    global _spark
    if _spark is None:
        from pyspark.sql import SparkSession

        # Delta Lake's jars (scripts/python/delta-jars.sh) and Hadoop's S3A with the AWS SDK
        # (s3a-jars.sh) on the one session's classpath, so the JVM starts once for plain Parquet,
        # Delta and S3 reads alike.
        cache = os.path.join(os.path.dirname(__file__), "..", "..", ".cache")
        jars = sorted(glob.glob(os.path.join(cache, "delta-jars", "*.jar")) + glob.glob(os.path.join(cache, "s3a-jars", "*.jar")))
        builder = SparkSession.builder.master("local[1]")
        if jars:
            builder = (
                builder.config("spark.jars", ",".join(os.path.abspath(j) for j in jars))
                .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
                .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
                # A small table's state in one task, not Delta's default 50 (seconds per read).
                .config("spark.databricks.delta.snapshotPartitions", "1")
                .config("spark.ui.showConsoleProgress", "false")
            )
        _spark = (
            builder.appName("quoteflow-interop")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "1")
            # C1 only and the serial collector: the JVM serves a few dozen small reads, where C2's
            # compiles and parallel GC threads cost more CPU than they save (about half the JVM's
            # CPU and a third of its time here; the suite is CPU-bound on two cores).
            .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC -XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
            .getOrCreate()
        )
        _spark.sparkContext.setLogLevel("ERROR")
    return _spark


def storage_options(s3):
    """delta-rs' object store options for an S3-compatible server over plain HTTP, path-style."""
    if s3 is None:
        return None
    return {
        "AWS_ENDPOINT_URL": s3["endpoint"],
        "AWS_ACCESS_KEY_ID": s3["access_key_id"],
        "AWS_SECRET_ACCESS_KEY": s3["secret_access_key"],
        "AWS_REGION": s3["region"],
        "AWS_ALLOW_HTTP": "true",
        "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "false",
    }


def read_deltalake(path, version, s3=None):
    from deltalake import DeltaTable

    table = DeltaTable(path, version=version, storage_options=storage_options(s3)).to_pyarrow_table()
    cols = [{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in table.schema]
    return cols, table.to_pylist()


def read_polars_delta(path, version, s3=None):
    import polars as pl

    df = pl.scan_delta(path, version=version, storage_options=storage_options(s3)).collect()
    cols = [{"name": n, "type": str(t)} for n, t in df.schema.items()]
    return cols, df.to_dicts()


def s3a_path(spark, path, s3):
    """`s3://BUCKET/KEY` as Spark reads it: `s3a://BUCKET/KEY`, with S3A's per-bucket settings.

    S3A keeps one file system per bucket for the JVM's life, made with the settings of the first
    read of that bucket: a test that reads one bucket through another endpoint or identity uses a
    bucket of its own.
    """
    if s3 is None:
        return path
    if not path.startswith("s3://"):
        raise SystemExit(f"an s3 request's path must be s3://BUCKET/PREFIX, not {path}")
    bucket = path[len("s3://") :].split("/", 1)[0]
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    for key, value in {
        "endpoint": s3["endpoint"],
        "endpoint.region": s3["region"],
        "access.key": s3["access_key_id"],
        "secret.key": s3["secret_access_key"],
        "path.style.access": "true",
        "connection.ssl.enabled": "false",
        "aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
    }.items():
        conf.set(f"fs.s3a.bucket.{bucket}.{key}", value)
    return "s3a://" + path[len("s3://") :]


def read_spark_delta(path, version, s3=None):
    spark = spark_session()
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    df = reader.load(s3a_path(spark, path, s3))
    cols = [{"name": f.name, "type": f.dataType.simpleString(), "nullable": f.nullable} for f in df.schema]
    return cols, df.toArrow().to_pylist()


def read_duckdb_delta(path, version, s3=None):
    """DuckDB's delta extension, in its own venv (scripts/python/duckdb-delta.sh): one process a read."""
    import subprocess

    here = os.path.dirname(os.path.abspath(__file__))
    python = os.path.join(here, "..", "..", ".cache", "duckdb-delta", "bin", "python")
    req = json.dumps({"path": path, "version": version, "s3": s3})
    run = subprocess.run([python, os.path.join(here, "read_duckdb_delta.py")], input=req, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"read_duckdb_delta.py exited {run.returncode}: {run.stderr.strip()[-4000:]}")
    out = json.loads(run.stdout)
    return out["columns"], out["rows"]


def read_spark(path, hive, fmt):
    spark = spark_session()
    reader = spark.read
    if hive:
        # Partition discovery from the directory names (Spark skips `.staging`: dot directories).
        reader = reader.option("basePath", path).option("recursiveFileLookup", "false")
    df = reader.json(path) if fmt == "ndjson" else reader.parquet(path)
    cols = [{"name": f.name, "type": f.dataType.simpleString(), "nullable": f.nullable} for f in df.schema]
    # Through Arrow (a row at a time through pickle takes ~40 s for 30,000 rows): Spark's
    # `timestamp` (an instant) arrives as timestamp[us, tz=UTC], `timestamp_ntz` without a zone,
    # which norm() refuses; decimals as Decimal.
    return cols, df.toArrow().to_pylist()


def stats_of(s):
    """A column chunk's statistics as pyarrow uses them for pruning (min/max only if it trusts them)."""
    if s is None:
        return None
    out = {"null_count": s.null_count if s.has_null_count else None, "has_min_max": s.has_min_max}
    if s.has_min_max:
        out["min"] = norm(s.min)
        out["max"] = norm(s.max)
    return out


def parquet_meta(path):
    import pyarrow.parquet as pq

    f = pq.ParquetFile(path)
    md = f.metadata
    cols = []
    for i in range(md.num_columns):
        c = f.schema.column(i)
        encodings = sorted({e for rg in range(md.num_row_groups) for e in md.row_group(rg).column(i).encodings})
        codecs = sorted({md.row_group(rg).column(i).compression for rg in range(md.num_row_groups)})
        cols.append(
            {
                "path": c.path,
                "physical": c.physical_type,
                "logical": str(c.logical_type),
                "encodings": encodings,
                "compression": codecs,
                "stats": [stats_of(md.row_group(rg).column(i).statistics) for rg in range(md.num_row_groups)],
            }
        )
    return {"reader": "parquet-meta", "rows": md.num_rows, "row_groups": md.num_row_groups, "columns": cols}


READERS = {"pyarrow": read_pyarrow, "polars": read_polars, "duckdb": read_duckdb, "spark": read_spark}
DELTA_READERS = {
    "deltalake": read_deltalake,
    "polars-delta": read_polars_delta,
    "spark-delta": read_spark_delta,
    "duckdb-delta": read_duckdb_delta,
}


def read_one(reader, path, hive, fmt, version=None, s3=None):
    if reader == "parquet-meta":
        return parquet_meta(path)
    if reader in DELTA_READERS:
        cols, rows = DELTA_READERS[reader](path, version, s3)
    else:
        cols, rows = READERS[reader](path, hive, fmt)
    return {"reader": reader, "columns": cols, "rows": [norm(r) for r in rows]}


def read_all(reqs):
    return [
        read_one(r["reader"], r["path"], r.get("hive", False), r.get("format", "parquet"), r.get("version"), r.get("s3"))
        for r in reqs
    ]


def serve():
    import socket

    server = socket.create_server(("127.0.0.1", 0))
    print(f"listening {server.getsockname()[1]}", flush=True)

    def watch_stdin():
        sys.stdin.read()  # returns when the owner closes it or dies
        os._exit(0)  # Spark's JVM exits with us: it watches its own stdin, a pipe from this process

    threading.Thread(target=watch_stdin, daemon=True).start()
    while True:
        conn, _ = server.accept()
        with conn, conn.makefile("rwb") as stream:
            try:
                answer = {"ok": read_all(json.loads(stream.readline()))}
            except BaseException as e:  # SystemExit too: norm() refuses values that way
                answer = {"error": f"{type(e).__name__}: {e}"}
            stream.write(json.dumps(answer, allow_nan=False).encode("utf8") + b"\n")


def main(argv):
    if len(argv) == 2 and argv[1] == "serve":
        serve()
        return
    if len(argv) == 2 and argv[1] == "batch":
        out = read_all(json.load(sys.stdin))
    elif len(argv) >= 3:
        fmt = argv[argv.index("--format") + 1] if "--format" in argv else "parquet"
        version = int(argv[argv.index("--version") + 1]) if "--version" in argv else None
        out = read_one(argv[1], argv[2], "--hive" in argv, fmt, version)
    else:
        raise SystemExit(__doc__)
    json.dump(out, sys.stdout, allow_nan=False)


if __name__ == "__main__":
    main(sys.argv)
