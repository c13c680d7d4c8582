/**
 * Parse time of a 500-group `/batch-kline` response (2 bars a group, the Professional cap):
 * quoteflow's decode (JSON.parse + envelope check + zod validation + a plain conversion loop)
 * against `JSON.parse` alone (the baseline), and against an all-zod design with transforms
 * (the reference the design was chosen against), in the same process.
 *
 * Run: `pnpm bench decode` (builds first; this file imports the built package).
 */
import { z } from 'zod';
import { decodeBatchKlineData, interpretRetResponse } from '@quoteflow/core/internal';

const GROUPS = 500;
const bar = (ts: number, p: number) => ({
  timestamp: String(ts),
  open_price: p.toFixed(3),
  close_price: (p + 0.12).toFixed(3),
  high_price: (p + 0.5).toFixed(3),
  low_price: (p - 0.4).toFixed(3),
  volume: String(1000 + (ts % 977)),
  turnover: (p * 1000).toFixed(2),
});
const text = JSON.stringify({
  ret: 200,
  msg: 'ok',
  trace: 'bench',
  data: {
    kline_list: Array.from({ length: GROUPS }, (_, i) => ({
      code: `C${i}.US`,
      kline_type: 1 + (i % 10),
      kline_data: [bar(1_700_000_000 + i * 60, 100 + i), bar(1_700_000_060 + i * 60, 100.5 + i)],
    })),
  },
});

// The all-zod alternative: one schema that validates and converts through transforms.
const num = z.string().transform((s, ctx) => {
  const n = Number(s);
  if (s === '' || !Number.isFinite(n)) ctx.addIssue({ code: 'custom', message: 'not a decimal' });
  return n;
});
const ZodBar = z
  .object({
    timestamp: num,
    open_price: num,
    close_price: num,
    high_price: num,
    low_price: num,
    volume: z.string(),
    turnover: z.string(),
  })
  .transform((b) => ({
    tsMs: b.timestamp * 1000,
    open: b.open_price,
    high: b.high_price,
    low: b.low_price,
    close: b.close_price,
    volume: b.volume === '' ? null : Number(b.volume),
    turnover: b.turnover === '' ? null : Number(b.turnover),
  }));
const ZodBatch = z.object({
  ret: z.number(),
  msg: z.string(),
  trace: z.string(),
  data: z.object({
    kline_list: z.array(
      z.object({ code: z.string(), kline_type: z.number().int(), kline_data: z.array(ZodBar) }),
    ),
  }),
});

let sink = 0;
const STAMPS = { readAtMs: 1_700_000_000_000, receivedAtMs: 1_700_000_000_120 };
const rows = measure(
  [
    ['JSON.parse alone (baseline)', () => (sink += (JSON.parse(text) as { ret: number }).ret)],
    [
      'quoteflow decode (zod validate + plain loop)',
      () => {
        const env = interpretRetResponse('batch-kline', { status: 200, text }, 'bench', []);
        sink += decodeBatchKlineData(env.data, STAMPS).length;
      },
    ],
    [
      'all-zod with transforms (reference)',
      () => (sink += ZodBatch.parse(JSON.parse(text)).data.kline_list.length),
    ],
  ],
  9,
  40,
);
const base = rows[0]!;
const withOps = rows.map((r) => ({ ...r, ops: 1e6 / r.us }));
console.log(
  `${GROUPS}-group /batch-kline response, ${(text.length / 1024).toFixed(0)} KiB; median of 9 interleaved rounds of 40; node ${process.version}\n`,
);
console.log('| case | ops/s | per op (µs) | time vs JSON.parse |');
console.log('|---|---:|---:|---:|');
for (const r of withOps)
  console.log(`| ${r.name} | ${r.ops.toFixed(0)} | ${r.us.toFixed(1)} | ${(r.us / base.us).toFixed(2)}x |`);
if (sink === -1) console.log(sink);

/** Median per-op µs of each case over interleaved rounds (alternating cases evens out machine load). */
function measure(
  cases: [string, () => unknown][],
  rounds: number,
  perRound: number,
): { name: string; us: number }[] {
  const samples = cases.map(() => [] as number[]);
  for (const [, fn] of cases) for (let i = 0; i < perRound / 5; i++) fn(); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (let c = 0; c < cases.length; c++) {
      (globalThis as { gc?: () => void }).gc?.();
      const fn = cases[c]![1];
      const t = process.hrtime.bigint();
      for (let i = 0; i < perRound; i++) fn();
      samples[c]!.push(Number(process.hrtime.bigint() - t) / 1e3 / perRound);
    }
  }
  return cases.map(([name], c) => ({ name, us: samples[c]!.sort((a, b) => a - b)[Math.floor(rounds / 2)]! }));
}
