/**
 * Client overhead per request: `QuoteflowClient.depth()` (request building, URL, undici request,
 * envelope check, zod decode, missing-code check) against a raw undici `request()` + `body.text()`
 * of the same URL (the baseline), one request at a time over keep-alive, against a local node:http
 * server in the same process. The client gets a pass-through scheduler so the figure is the
 * client's own cost, not the plan's pacing (the scheduler has its own bench).
 *
 * Run: `pnpm bench client` (builds first; this file imports the built package).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { QuoteflowClient, type RequestScheduler } from '@quoteflow/core';

const body = JSON.stringify({
  ret: 200,
  msg: 'ok',
  trace: 'bench',
  data: {
    tick_list: [
      {
        code: 'EURGBP',
        seq: '30686349',
        tick_time: '1677830357227',
        bids: [{ price: '0.87120', volume: '100000.00' }],
        asks: [{ price: '0.87131', volume: '250000.00' }],
      },
    ],
  },
});
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const passThrough: RequestScheduler = { schedule: (_r, send) => send(), reportRateLimited: () => {} };
const client = new QuoteflowClient({
  baseUrl,
  token: 'bench-token',
  plan: 'professional',
  scheduler: passThrough,
});
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 32 });
const rawUrl = `${baseUrl}/quote-b-api/depth-tick?token=bench-token&query=${encodeURIComponent(JSON.stringify({ trace: 'x', data: { symbol_list: [{ code: 'EURGBP' }] } }))}`;

let sink = 0;
const rows = await measure(
  [
    [
      'raw undici request + body.text() (baseline)',
      async () => {
        const res = await request(rawUrl, { dispatcher: agent, headers: { accept: 'application/json' } });
        sink += (await res.body.text()).length;
      },
    ],
    ['QuoteflowClient.depth() (1 code)', async () => (sink += (await client.depth(['EURGBP'])).length)],
  ],
  9,
  1_000,
);
const base = rows[0]!;
const withOps = rows.map((r) => ({ ...r, ops: 1e6 / r.us }));
console.log(
  `sequential requests over keep-alive to a local node:http server; median of 9 interleaved rounds of 1,000; node ${process.version}\n`,
);
console.log('| case | requests/s | per request (µs) | time vs raw undici | client overhead (µs) |');
console.log('|---|---:|---:|---:|---:|');
for (const r of withOps)
  console.log(
    `| ${r.name} | ${r.ops.toFixed(0)} | ${r.us.toFixed(1)} | ${(r.us / base.us).toFixed(2)}x | ${(r.us - base.us).toFixed(1)} |`,
  );
if (sink === -1) console.log(sink);
await client.close();
await agent.close();
server.closeAllConnections();
server.close();

/** Median per-op µs of each case over interleaved rounds (alternating cases evens out machine load). */
async function measure(
  cases: [string, () => Promise<unknown>][],
  rounds: number,
  perRound: number,
): Promise<{ name: string; us: number }[]> {
  const samples = cases.map(() => [] as number[]);
  for (const [, fn] of cases) for (let i = 0; i < perRound / 5; i++) await fn(); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (let c = 0; c < cases.length; c++) {
      (globalThis as { gc?: () => void }).gc?.();
      const fn = cases[c]![1];
      const t = process.hrtime.bigint();
      for (let i = 0; i < perRound; i++) await fn();
      samples[c]!.push(Number(process.hrtime.bigint() - t) / 1e3 / perRound);
    }
  }
  return cases.map(([name], c) => ({ name, us: samples[c]!.sort((a, b) => a - b)[Math.floor(rounds / 2)]! }));
}
