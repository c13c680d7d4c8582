// Commit latency per checkpoint of the K-line dataset sink (`DatasetSink.checkpoint()`: the file
// encoded, its commit with the series' watermarks), on the local disk and on S3, in the same run.
// S3 is a real S3Proxy 4.1.0 on 127.0.0.1 (test/support/s3.ts: started here, filesystem backend,
// signed requests): a checkpoint there uploads the file to its final key (one PUT) and puts the
// version with If-None-Match (one more PUT), after listing the log once (a refresh). Shapes: a live
// checkpoint of 1,000 and of 10,000 series (one closed bar each), a backfill checkpoint (18 series
// × 6,000 bars), Parquet; live shapes encoded on the calling thread, the backfill on one worker
// thread, as klineSync does. p50 / p95 of BENCH_S3_COMMIT_ROUNDS (default 20) checkpoints each.
// Run: `pnpm bench s3-commit` (needs scripts/s3proxy/setup.sh).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatasetSink } from '@quoteflow/sinks';
import { benchUpdate as update, pct } from './bench-bars.js';
import { freshBucket, startS3Proxy } from '../../../test/support/s3.js';

const rounds = Number(process.env['BENCH_S3_COMMIT_ROUNDS'] ?? 20);

const f = (xs: number[]): string => `${pct(xs, 50).toFixed(1)} / ${pct(xs, 95).toFixed(1)} ms`;

/** `rounds` checkpoints of `series` × `bars` into `dir`; the time of each. */
async function checkpoints(
  dir: string,
  series: number,
  bars: number,
  encoderThreads: number,
): Promise<number[]> {
  const sink = await DatasetSink.open({ dir, encoderThreads, upkeep: false });
  const times: number[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      for (let s = 0; s < series; s++) for (let b = 0; b < bars; b++) sink.write(update(s, r * bars + b));
      const t = performance.now();
      await sink.checkpoint();
      times.push(performance.now() - t);
    }
  } finally {
    await sink.close();
  }
  return times;
}

const work = await mkdtemp(join(tmpdir(), 'qf-s3-commit-bench-'));
const proxy = await startS3Proxy();
try {
  Object.assign(process.env, {
    AWS_ENDPOINT_URL: proxy.value.endpoint,
    AWS_ACCESS_KEY_ID: proxy.value.accessKeyId,
    AWS_SECRET_ACCESS_KEY: proxy.value.secretAccessKey,
    AWS_REGION: proxy.value.region,
  });
  const bucket = await freshBucket('commit-bench', proxy.value);
  console.log(
    `| checkpoint (${rounds} rounds) | local disk p50 / p95 | S3 (S3Proxy, 127.0.0.1) p50 / p95 | S3 − local (p50) |`,
  );
  console.log('|---|---|---|---|');
  for (const [series, bars, threads] of [
    [1_000, 1, 0],
    [10_000, 1, 0],
    [18, 6_000, 1],
  ] as const) {
    const name = `${series}x${bars}`;
    const local = await checkpoints(join(work, name), series, bars, threads);
    const s3 = await checkpoints(bucket.url(name), series, bars, threads);
    console.log(
      `| ${series.toLocaleString('en')} series × ${bars.toLocaleString('en')} bar${bars > 1 ? 's' : ''} | ${f(local)} | ${f(s3)} | ${(pct(s3, 50) - pct(local, 50)).toFixed(1)} ms |`,
    );
  }
} finally {
  await proxy.stop();
  await rm(work, { recursive: true, force: true });
}
