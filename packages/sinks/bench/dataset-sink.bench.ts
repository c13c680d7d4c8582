// Commit time per checkpoint of the file dataset's committing sink (`DatasetSink.checkpoint()`:
// stage the file, commit it with the series' watermarks to the dataset's log, publish), against
// the same rows written by a `DatasetWriter` that leaves them staged (`flush()` with `publish:
// 'on-commit'`: the file written and fsync'd, no log, no rename; a plain writer commits each file
// to its table's log too) in the same run. Three shapes: a live checkpoint of 1,000 and of 10,000 series
// (one closed bar each), and a backfill checkpoint (18 series × 6,000 bars). Parquet, encoded on
// the calling thread for live shapes and on one worker thread for the backfill, as klineSync does.
// Run: `pnpm bench dataset-sink` (builds first). BENCH_SINK_ROUNDS (default 20) checkpoints each.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BarUpdate } from '@quoteflow/core';
import { DatasetSink, DatasetWriter } from '@quoteflow/sinks';
import { benchUpdate as update, pct } from './bench-bars.js';

const rounds = Number(process.env['BENCH_SINK_ROUNDS'] ?? 20);

/** Per round, the rows of one checkpoint: `series` series × `bars` bars after the earlier rounds'. */
function rowsOf(round: number, series: number, bars: number): BarUpdate[] {
  const out: BarUpdate[] = [];
  for (let s = 0; s < series; s++) for (let b = 0; b < bars; b++) out.push(update(s, round * bars + b));
  return out;
}

async function measure(series: number, bars: number, encoderThreads: number): Promise<string> {
  const work = await mkdtemp(join(tmpdir(), 'qf-sink-bench-'));
  try {
    const sink = await DatasetSink.open({ dir: join(work, 'sink'), encoderThreads, upkeep: false });
    const writer = new DatasetWriter({ dir: join(work, 'writer'), encoderThreads, publish: 'on-commit' });
    const committed: number[] = [];
    const plain: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const rows = rowsOf(r, series, bars);
      for (const u of rows) sink.write(u);
      let t = performance.now();
      await sink.checkpoint();
      committed.push(performance.now() - t);
      for (const u of rows) writer.append(u);
      t = performance.now();
      await writer.flush();
      plain.push(performance.now() - t);
    }
    await sink.close();
    await writer.close();
    const f = (xs: number[]) => `${pct(xs, 50).toFixed(1)} / ${pct(xs, 95).toFixed(1)} ms`;
    return `| ${series.toLocaleString('en')} series × ${bars.toLocaleString('en')} bar${bars > 1 ? 's' : ''} | ${f(committed)} | ${f(plain)} | ${(pct(committed, 50) - pct(plain, 50)).toFixed(1)} ms |`;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * The claim of a writer's series at open (`DatasetSink.open({ series })`: one commit naming each
 * series' owner, then its writer record) against the same open without claims, best of 5 each on
 * a fresh table; and the close that gives the claims up (one commit removing them).
 */
async function measureClaim(series: number): Promise<string> {
  const work = await mkdtemp(join(tmpdir(), 'qf-claim-bench-'));
  const keys = Array.from({ length: series }, (_, s) => `S${s}.US|1`);
  const open: number[] = [];
  const claimed: number[] = [];
  const released: number[] = [];
  try {
    for (let r = 0; r < 5; r++) {
      let t = performance.now();
      const plain = await DatasetSink.open({ dir: join(work, `plain-${r}`), upkeep: false });
      open.push(performance.now() - t);
      await plain.close();
      t = performance.now();
      const sink = await DatasetSink.open({ dir: join(work, `claim-${r}`), upkeep: false, series: keys });
      claimed.push(performance.now() - t);
      t = performance.now();
      await sink.close();
      released.push(performance.now() - t);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  const best = (xs: number[]) => Math.min(...xs).toFixed(1);
  return `| ${series.toLocaleString('en')} series | ${best(open)} ms | ${best(claimed)} ms | ${best(released)} ms |`;
}

console.log(
  `| checkpoint (${rounds} rounds) | DatasetSink.checkpoint() p50 / p95 | DatasetWriter.flush() p50 / p95 | commit's own cost (p50) |`,
);
console.log('|---|---|---|---|');
console.log(await measure(1_000, 1, 0));
console.log(await measure(10_000, 1, 0));
console.log(await measure(18, 6_000, 1));
console.log('');
console.log(
  '| claim at open | open without claims (best of 5) | open claiming every series | close giving them up |',
);
console.log('|---|---|---|---|');
console.log(await measureClaim(1_000));
console.log(await measureClaim(10_000));
