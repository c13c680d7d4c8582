/**
 * Parquet through the file sink vs pyarrow, same table, same run.
 *
 * A deterministic 1,000,000-row K-line table (100 codes x 10,000 one-minute bars) is written
 * (1) by pyarrow (`pq.write_table(..., compression="zstd")` + fsync, spawned in `.venv`, reading
 * the same rows from an Arrow IPC file the sink wrote), and (2) through `DatasetWriter` from `Bar`
 * records fed in batches of 10,000, created per batch as a source would (creating them, mapping,
 * building apache-arrow record batches, parquet-wasm encoding, staging write, fsync and rename are
 * all inside the sink's time). The sink hands a file's rows to its encoder in 256Ki-row pieces
 * while the file is open; parquet-wasm's streaming writer encodes each as it arrives.
 * The plan caps ingest at about 10,000 bars/s, so the figure that matters is how far above that
 * the sink stays and how long it stalls the event loop (`perf_hooks.monitorEventLoopDelay`);
 * size target: file <= pyarrow's size + 10%. The encoder alone is timed on the same columns too
 * (encode only, in memory).
 *
 * Run: `pnpm bench parquet` (needs `scripts/python/setup.sh`; builds first).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Bar } from '@quoteflow/core';
import { DatasetWriter, type DatasetWriterOptions } from '@quoteflow/sinks';
import { createColumnBuilder } from '../dist/files/internal/column-builders.js';
import { encodeBatches } from '../dist/files/internal/encode-worker.js';

const ROWS = 1_000_000;
const CODES = 100;
const REPEATS = Number(process.env['BENCH_REPEATS'] ?? 3);
const FEED_BATCH = 10_000;
const root = new URL('../../..', import.meta.url).pathname;
const python = join(root, '.venv', 'bin', 'python');

function mulberry32(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The table, column by column (so the heap does not hold a million objects between runs). */
interface KlineColumns {
  codes: string[];
  code: Int32Array;
  ts: Float64Array;
  open: Float64Array;
  high: Float64Array;
  low: Float64Array;
  close: Float64Array;
  volume: Float64Array;
  turnover: Float64Array;
}

function klineTable(): KlineColumns {
  const rnd = mulberry32(42);
  const per = ROWS / CODES;
  const t0 = Date.UTC(2026, 0, 5, 1, 30);
  const f = (): Float64Array => new Float64Array(ROWS);
  const t: KlineColumns = {
    codes: Array.from({ length: CODES }, (_, k) => `C${String(k).padStart(3, '0')}.US`),
    code: new Int32Array(ROWS),
    ts: f(),
    open: f(),
    high: f(),
    low: f(),
    close: f(),
    volume: f(),
    turnover: f(),
  };
  for (let k = 0; k < CODES; k++) {
    let p = 100 + k;
    for (let i = 0; i < per; i++) {
      const j = k * per + i;
      const open = p;
      p = Math.round(p * (1 + (rnd() - 0.5) * 0.01) * 100) / 100;
      const volume = Math.floor(rnd() * 10_000);
      t.code[j] = k;
      t.ts[j] = t0 + i * 60_000;
      t.open[j] = open;
      t.high[j] = Math.max(open, p) + 0.01;
      t.low[j] = Math.min(open, p) - 0.01;
      t.close[j] = p;
      t.volume[j] = volume;
      t.turnover[j] = Math.round(volume * p * 100) / 100;
    }
  }
  return t;
}

/** Rows [from, to) as `Bar` records, created as a source would create them. */
function barsOf(t: KlineColumns, from: number, to: number): Bar[] {
  const out: Bar[] = [];
  for (let j = from; j < to; j++) {
    out.push({
      type: 'bar',
      code: t.codes[t.code[j]!]!,
      klineType: 1,
      tsMs: t.ts[j]!,
      open: t.open[j]!,
      high: t.high[j]!,
      low: t.low[j]!,
      close: t.close[j]!,
      volume: t.volume[j]!,
      turnover: t.turnover[j]!,
      readAtMs: t.ts[j]! + 60_000,
      receivedAtMs: t.ts[j]! + 60_000 + j,
    });
  }
  return out;
}

/** The data files under `dir` (not staging, not the tables' Delta logs). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !e.parentPath.includes('.staging') && !e.parentPath.includes('_delta_log'))
    .map((e) => join(e.parentPath, e.name));
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const gc = (): void => (globalThis as { gc?: () => void }).gc?.();

interface SinkRun {
  ms: number;
  /** User + system CPU time of the whole process (all threads), ms. */
  cpuMs: number;
  /** User + system CPU time of the calling thread (creating records, mapping, file I/O), ms. */
  mainCpuMs: number;
  bytes: number;
  files: number;
  stallMs: number;
}

async function runSink(
  table: KlineColumns,
  rows: number,
  opts: Partial<DatasetWriterOptions>,
): Promise<SinkRun> {
  const dir = mkdtempSync(join(tmpdir(), 'qf-bench-sink-'));
  try {
    gc();
    const h = monitorEventLoopDelay({ resolution: 5 });
    h.enable();
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const m0 = process.threadCpuUsage();
    const w = new DatasetWriter({ dir, maxRowsPerFile: ROWS, klineSubPartition: 'none', ...opts });
    for (let i = 0; i < rows; i += FEED_BATCH) {
      await w.write(barsOf(table, i, Math.min(rows, i + FEED_BATCH)));
      await yieldToLoop(); // a stream delivers records over time, not in one synchronous loop
    }
    await w.close();
    const ms = performance.now() - t0;
    const c1 = process.cpuUsage(c0);
    const m1 = process.threadCpuUsage(m0);
    h.disable();
    const files = filesUnder(dir);
    const bytes = files.reduce((n, f) => n + statSync(f).size, 0);
    return {
      ms,
      cpuMs: (c1.user + c1.system) / 1000,
      mainCpuMs: (m1.user + m1.system) / 1000,
      bytes,
      files: files.length,
      stallMs: h.max / 1e6,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function time(f: () => number): { ms: number; cpuMs: number; bytes: number } {
  let best = Infinity;
  let bestCpu = Infinity;
  let bytes = 0;
  for (let i = 0; i < REPEATS; i++) {
    gc();
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    bytes = f();
    const c1 = process.cpuUsage(c0);
    best = Math.min(best, performance.now() - t0);
    bestCpu = Math.min(bestCpu, (c1.user + c1.system) / 1000);
  }
  return { ms: best, cpuMs: bestCpu, bytes };
}

const fmtRate = (ms: number): string => `${(ROWS / ms / 1000).toFixed(2)} M`;
const mb = (b: number): string => (b / 1e6).toFixed(2);

function pyarrowOnce(
  ipc: string,
  out: string,
): { ms: number; cpuMs: number; bytes: number; version: string } {
  const res = execFileSync(python, [join(root, 'scripts/python/bench_pyarrow_write.py'), ipc, out, '1'], {
    encoding: 'utf8',
  });
  const pa = JSON.parse(res) as {
    rows: number;
    bytes: number;
    ms: number[];
    cpu_ms: number[];
    pyarrow: string;
  };
  if (pa.rows !== ROWS) throw new Error(`pyarrow read ${pa.rows} rows, expected ${ROWS}`);
  return { ms: pa.ms[0]!, cpuMs: pa.cpu_ms[0]!, bytes: pa.bytes, version: pa.pyarrow };
}

const ratio = (x: number): string => `${x.toFixed(2)}x`;

async function main(): Promise<void> {
  const load0 = loadavg()[0]!;
  const table = klineTable();
  const work = mkdtempSync(join(tmpdir(), 'qf-bench-'));
  try {
    // The same table for pyarrow, as an uncompressed Arrow IPC file written by the sink (untimed).
    const input = join(work, 'input');
    const w = new DatasetWriter({
      dir: input,
      format: 'arrow',
      encoderThreads: 0,
      maxRowsPerFile: ROWS,
      klineSubPartition: 'none',
    });
    for (let i = 0; i < ROWS; i += FEED_BATCH) await w.write(barsOf(table, i, i + FEED_BATCH));
    await w.close();
    const ipc = filesUnder(input)[0]!;

    const configs: [string, Partial<DatasetWriterOptions>][] = [
      ['sink: 1 encoder thread (default), 1 file', { encoderThreads: 1 }],
      ['sink: inline (encoderThreads 0), 1 file', { encoderThreads: 0 }],
    ];
    // Warm-up (untimed): compiles parquet-wasm in the shared encoder thread and on this thread,
    // as in a long-running process after its first files.
    await runSink(table, ROWS, { encoderThreads: 1 });
    await runSink(table, 300_000, { encoderThreads: 0 });

    // Interleaved, so pyarrow and every sink variant see the same load on a shared machine.
    const pa: { ms: number; cpuMs: number; bytes: number; version: string }[] = [];
    const runs: SinkRun[][] = configs.map(() => []);
    for (let r = 0; r < REPEATS; r++) {
      pa.push(pyarrowOnce(ipc, join(work, 'pyarrow.parquet')));
      for (const [i, [, opts]] of configs.entries()) runs[i]!.push(await runSink(table, ROWS, opts));
    }
    const paMs = median(pa.map((p) => p.ms));
    const paCpu = median(pa.map((p) => p.cpuMs));
    const paBytes = pa[0]!.bytes;
    const line = (
      name: string,
      ms: number,
      cpuMs: number,
      mainCpu: string,
      bytes: number,
      stall: string,
    ): string =>
      `| ${name} | ${fmtRate(ms)} | ${ratio(paMs / ms)} | ${cpuMs.toFixed(0)} ms | ${ratio(paCpu / cpuMs)} | ` +
      `${mainCpu} | ${mb(bytes)} | ${ratio(bytes / paBytes)} | ${stall} |`;
    const rows: string[] = [
      line(`pyarrow ${pa[0]!.version} write_table zstd (baseline)`, paMs, paCpu, '–', paBytes, '–'),
    ];
    for (const [i, [name]] of configs.entries()) {
      const rs = runs[i]!;
      const stall = Math.max(...rs.map((r) => r.stallMs));
      rows.push(
        line(
          name,
          median(rs.map((r) => r.ms)),
          median(rs.map((r) => r.cpuMs)),
          `${median(rs.map((r) => r.mainCpuMs)).toFixed(0)} ms`,
          rs[0]!.bytes,
          `${stall.toFixed(0)} ms`,
        ),
      );
    }

    // Candidate encoders on the same columns, encode only (no mapping, no disk), best of REPEATS.
    const builder = createColumnBuilder('kline');
    for (const b of barsOf(table, 0, ROWS)) builder.append(b);
    const batch = builder.build();
    const pw = time(() => encodeBatches([batch], 'parquet').byteLength);
    rows.push(line('encode only: parquet-wasm 0.8 via apache-arrow', pw.ms, pw.cpuMs, '–', pw.bytes, '–'));

    const load1 = loadavg()[0]!;
    console.log(
      `1,000,000 K-line rows (100 codes), zstd, fsync'd; median of ${REPEATS} interleaved runs (encode-only rows: best of ${REPEATS}); ` +
        `pyarrow median ${paMs.toFixed(0)} ms wall, ${paCpu.toFixed(0)} ms CPU; ${availableParallelism()} cores, load average ${load0.toFixed(1)} → ${load1.toFixed(1)}.\n`,
    );
    console.log(
      '| writer | rows/s (wall) | vs pyarrow (wall) | CPU time | vs pyarrow (CPU) | of which calling thread | file MB | size vs pyarrow | longest event-loop stall |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const r of rows) console.log(r);
    console.log(
      '\nTarget: size <= 1.10x pyarrow; speed far above the ~10,000 bars/s a plan lets in. CPU time (user + system, all threads of the ' +
        'process) is the load-independent figure on a shared machine; wall-clock rows/s move with the load.',
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
