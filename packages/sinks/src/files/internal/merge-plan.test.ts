import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LogFile } from '../dataset-log-format.js';
import { MERGE_FAN_IN, mergeTier, planMerges } from './merge-plan.js';

let n = 0;
const file = (rows: number): LogFile => ({
  path: `kline/kline_type=1/month=2026-01/part-${String(++n).padStart(8, '0')}.parquet`,
  rows,
  bytes: rows * 40,
});

/** What upkeep does with a plan: each group becomes files of at most `target` rows (its rows cut in order). */
function applyAll(files: LogFile[], target: number, closed = false): LogFile[] {
  for (;;) {
    const groups = planMerges(files, { targetRows: target, closed });
    if (groups.length === 0) return files;
    const group = groups[0]!;
    const gone = new Set(group.map((f) => f.path));
    let rows = group.reduce((s, f) => s + f.rows, 0);
    files = files.filter((f) => !gone.has(f.path));
    for (; rows > 0; rows -= target) files.push(file(Math.min(rows, target)));
  }
}

/** The oracle's tier: the k with F^k <= rows < F^(k+1), by multiplying up (no logarithms, no division). */
function tierByPowers(rows: number, fanIn: number): number {
  let k = 0;
  for (let upper = fanIn; upper <= Math.max(1, rows); upper *= fanIn) k++;
  return k;
}

describe('planMerges', () => {
  it('leaves a day of 30 s checkpoints (2,880 files of 500 rows) as the digit sum of 2,880 in base 4 files', () => {
    let files: LogFile[] = [];
    for (let i = 0; i < 2880; i++) files = applyAll([...files, file(500)], 4 * 1024 * 1024);
    // 2,880 = 2·4^5 + 3·4^4 + 1·4^3: two files of 512,000 rows, three of 128,000, one of 32,000.
    expect(files.map((f) => f.rows).sort((a, b) => b - a)).toEqual([
      512_000, 512_000, 128_000, 128_000, 128_000, 32_000,
    ]);
  });

  it('merges four files of a tier into one of the next, oldest first', () => {
    const a = [file(100), file(120), file(90), file(70), file(80)];
    expect(planMerges(a, { targetRows: 1_000_000, closed: false })).toEqual([a.slice(0, 4)]);
    expect(planMerges(a.slice(0, 3), { targetRows: 1_000_000, closed: false })).toEqual([]);
  });

  it('leaves full files alone, and merges a closed partition whole once it holds two small files', () => {
    const full = file(1000);
    const small = [file(10), file(900)];
    expect(planMerges([full, ...small], { targetRows: 1000, closed: true })).toEqual([small]);
    expect(planMerges([full, small[0]!], { targetRows: 1000, closed: true })).toEqual([]);
    expect(planMerges([full, full, full, full], { targetRows: 1000, closed: false })).toEqual([]);
  });

  it('never holds F or more small files of a tier once the merges due are done, and keeps every row', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 2, max: 20_000 }),
        (adds, target) => {
          let files: LogFile[] = [];
          let rows = 0;
          for (const r of adds) {
            files = applyAll([...files, file(r)], target);
            rows += r;
            expect(files.reduce((s, f) => s + f.rows, 0)).toBe(rows);
            const perTier = new Map<number, number>();
            for (const f of files)
              if (f.rows < target) {
                const k = tierByPowers(f.rows, MERGE_FAN_IN);
                perTier.set(k, (perTier.get(k) ?? 0) + 1);
              }
            for (const count of perTier.values()) expect(count).toBeLessThan(MERGE_FAN_IN);
            // So a partition holds at most (F - 1) small files per tier below the target's.
            const small = files.filter((f) => f.rows < target).length;
            expect(small).toBeLessThanOrEqual((MERGE_FAN_IN - 1) * (tierByPowers(target, MERGE_FAN_IN) + 1));
          }
        },
      ),
    );
  });

  it('tiers by powers of the fan-in', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1, max: 2 ** 40 }), fc.integer({ min: 2, max: 16 }), (rows, fanIn) => {
        expect(mergeTier(rows, fanIn)).toBe(tierByPowers(rows, fanIn));
      }),
    );
  });
});
