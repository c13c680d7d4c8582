import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { readQuotaData } from './quota-data.js';

const roots: string[] = [];
afterAll(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))));

const PLAN = {
  type: 'plan',
  plan: 'basic',
  per_day: 86_400,
  rules: [{ id: 'per-minute', scope: 'all', window_ms: 60_000, limit: 60 }],
};
const line = (ms: number, endpoint = 'kline', outcome = 'ok') =>
  JSON.stringify({
    type: 'request',
    sent: new Date(ms).toISOString(),
    endpoint,
    attempt: 1,
    wait_ms: 0,
    latency_ms: 1,
    outcome,
  });

async function logDir(files: string[][]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'qf-quota-'));
  roots.push(dir);
  await mkdir(join(dir, '_requests'));
  await Promise.all(
    files.map((lines, i) =>
      writeFile(join(dir, '_requests', `requests-${i}.ndjson`), `${lines.join('\n')}\n`),
    ),
  );
  return dir;
}

describe('readQuotaData', () => {
  it('is undefined without a request log', async () => {
    expect(await readQuotaData(await logDir([]))).toBeUndefined();
  });

  it('counts requests per endpoint and minute across processes and the budget left over the last 24 h (naive oracle)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(fc.integer({ min: 0, max: 3 * 86_400_000 }), fc.constantFrom('kline', 'batch-kline')),
          {
            minLength: 1,
            maxLength: 60,
          },
        ),
        async (sends) => {
          const t0 = Date.UTC(2026, 10, 1);
          const half = Math.ceil(sends.length / 2);
          const toLines = (part: typeof sends) => part.map(([ms, e]) => line(t0 + ms, e));
          const dir = await logDir([
            [JSON.stringify(PLAN), ...toLines(sends.slice(0, half))],
            [JSON.stringify(PLAN), ...toLines(sends.slice(half)), '{"type":"requ'],
          ]);
          const q = (await readQuotaData(dir))!;
          expect(q.requests).toBe(sends.length);
          expect(q.perDay).toBe(86_400);
          expect(q.perMinute).toBe(60);
          for (const { endpoint, points } of q.perMinuteByEndpoint)
            for (const [minute, n] of points)
              expect(n).toBe(
                sends.filter(([ms, e]) => e === endpoint && Math.floor((t0 + ms) / 60_000) * 60 === minute)
                  .length,
              );
          // After each minute with requests: the budget less every request of the 24 h up to the last one of it.
          for (const [minute, left] of q.budgetLeft) {
            const lastOfMinute = Math.max(
              ...sends.map(([ms]) => t0 + ms).filter((ms) => Math.floor(ms / 60_000) * 60 === minute),
            );
            const used = sends.filter(
              ([ms]) => t0 + ms <= lastOfMinute && t0 + ms > lastOfMinute - 86_400_000,
            ).length;
            expect(left).toBe(86_400 - used);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
