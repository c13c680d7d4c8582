"""Baseline for packages/sinks/bench/parquet.bench.ts: pyarrow writing the same table as zstd Parquet.

Usage: bench_pyarrow_write.py INPUT.arrow OUTPUT.parquet REPEATS
Reads the table (Arrow IPC file, untimed), then times pq.write_table(..., compression="zstd")
plus fsync, REPEATS times, and prints JSON: {"rows", "bytes", "ms": [...], "cpu_ms": [...], "pyarrow"}
(cpu_ms: user + system time of this process, all threads).
"""
import json
import os
import resource
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq


def main(src, dst, repeats):
    with pa.memory_map(src) as f:
        table = pa.ipc.open_file(f).read_all()
    times = []
    cpu = []
    for _ in range(repeats):
        if os.path.exists(dst):
            os.remove(dst)
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        pq.write_table(table, dst, compression="zstd")
        fd = os.open(dst, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        times.append((time.perf_counter() - t0) * 1000)
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu.append((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000)
    print(json.dumps({"rows": table.num_rows, "bytes": os.path.getsize(dst), "ms": times, "cpu_ms": cpu, "pyarrow": pa.__version__}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
