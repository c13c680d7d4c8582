/**
 * The bars of the crash tests (s3-crash, upkeep-crash): bar `n` is series `C<n % codes>.US`, a
 * minute after the series' previous bar from `t0`, closing at `n + 0.25`; the same function as
 * source for a child process, and what a reader gives back of them.
 */
import { expect } from 'vitest';
import type { ReadBack } from './python.js';

/** Bars as seen by the crash tests: the first bar's start and the number of series. */
export interface CrashBars {
  readonly t0: number;
  readonly codes: number;
}

/** `const bar = (n) => …` (a final `BarUpdate`) for a child process's script. */
export function barScript({ t0, codes }: CrashBars): string {
  return `
const bar = (n) => {
  const tsMs = ${t0} + Math.floor(n / ${codes}) * 60_000;
  return { type: 'bar-update', final: true, revision: 0, code: 'C' + (n % ${codes}) + '.US', klineType: 1, tsMs,
    open: n, high: n + 1, low: n - 1, close: n + 0.25, volume: n, turnover: n * 2, readAtMs: tsMs + 120_000, receivedAtMs: tsMs + 120_100 };
};`;
}

/** Bar `n` as {@link crashRowsOf} writes a row: `code|ts|close`. */
export const crashRowOf = ({ t0, codes }: CrashBars, n: number): string =>
  `C${n % codes}.US|${t0 + Math.floor(n / codes) * 60_000}|${n + 0.25}`;

/** `code|ts|close` of each row a reader gave back, sorted. */
export const crashRowsOf = (back: ReadBack): string[] =>
  back.rows.map((r) => `${String(r.code)}|${String(r.ts)}|${String(r.close)}`).sort();

/** No (code, ts) twice among `rows` (`code|ts|close`). */
export function expectNoneTwice(rows: readonly string[], what: string): void {
  const keys = rows.map((r) => r.split('|').slice(0, 2).join('|'));
  const twice = keys.filter((k, i) => keys.indexOf(k) !== i);
  expect(twice, what).toEqual([]);
}
