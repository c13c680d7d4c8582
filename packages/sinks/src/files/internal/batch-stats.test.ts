import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatasetRecord } from '../dataset-columns.js';
import { DatasetWriter } from '../dataset-writer.js';
import { readFileStats } from '../delta/file-stats.js';
import { bar, depth, level, suspension, warmEncoderThread } from '../../../test-support/test-records.js';

let dir: string;
beforeAll(async () => {
  await warmEncoderThread();
  dir = await mkdtemp(join(tmpdir(), 'qf-batch-stats-'));
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 0, 5);
// Doubles as a file may hold them: ordinary, negative zero, NaN, the infinities, and none (null).
const double = fc.oneof(
  { weight: 8, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Infinity, -Infinity, -0) },
);
const code = fc.oneof(fc.constantFrom('BTCUSDT', 'AAPL.US', '700.HK'), fc.string({ maxLength: 40 }));
const klineRecord = fc
  .record({ code, minute: fc.integer({ min: -1000, max: 100_000 }), v: double, volume: fc.option(double) })
  .map(({ code: c, minute, v, volume }) =>
    bar(c, T0 + minute * 60_000, { open: v, close: -v, volume: (volume ?? null) as number }),
  );
const depthRecord = fc
  .record({
    code,
    seq: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
    tick: fc.option(fc.integer({ min: 0, max: 1e6 })),
  })
  .map(({ code: c, seq, tick }) => depth(c, seq, tick === null ? undefined : T0 + tick, [level(1, 2)], []));
const suspensionRecord = fc
  .record({
    symbol: fc.string({ minLength: 1, maxLength: 40 }),
    name: fc.option(fc.string({ maxLength: 40 })),
  })
  .map(({ symbol, name }) => suspension(symbol, { symbolName: name ?? undefined }));

describe('BatchStats (the encoder gathers a file’s Delta statistics)', () => {
  it.each([
    ['kline', klineRecord],
    ['depth', depthRecord],
    ['suspension', suspensionRecord],
  ] as const)(
    'gives for %s files exactly what reading the written file back gives, row by row',
    async (_kind, record) => {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(record as fc.Arbitrary<DatasetRecord>, { minLength: 1, maxLength: 300 }),
          async (records) => {
            const root = join(dir, `run-${n++}`);
            const w = new DatasetWriter({
              dir: root,
              encoderThreads: n % 2,
              publish: 'on-commit',
              klineSubPartition: 'none',
            });
            await w.write(records);
            const files = await w.flush();
            await w.close();
            for (const f of files) expect(f.stats).toEqual(await readFileStats(root, f.stagedPath!, f.kind));
          },
        ),
        { numRuns: 25 },
      );
    },
    60_000,
  );
});
