/**
 * Simulator throughput over real sockets on 127.0.0.1, against a same-process baseline: a bare
 * `node:http` server answering a precomputed body of the same size (so the difference is the
 * simulator's own work: routing, limits, validation, market and JSON). Plus the market's cost of
 * 500 daily bars cold (a fresh seed, nothing cached) and warm.
 *
 * Run: `pnpm bench simulator` (builds first; this file imports the built package).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Bench } from 'tinybench';
import { defaultCatalogue, startSimulator, syntheticCatalogue, SimMarket } from '@quoteflow/simulator';

const T = Date.parse('2026-11-17T15:00:00Z');
const benchStart = performance.now();
const synthetic = syntheticCatalogue({ count: 500, classes: ['crypto'] });
const sim = await startSimulator({
  seed: 3,
  // Market time starts at T and runs in real time (a clock like core's acceleratedClock({ speed: 1, startMs: T })).
  clock: { now: () => T + (performance.now() - benchStart) },
  rateLimits: false,
  products: [...defaultCatalogue(), ...synthetic],
});
const batchBody = JSON.stringify({
  trace: 'bench',
  data: {
    data_list: synthetic.map((p) => ({
      code: p.code,
      kline_type: 1,
      kline_timestamp_end: 0,
      query_kline_num: 2,
      adjust_type: 0,
    })),
  },
});
const depthQuery = encodeURIComponent(
  JSON.stringify({
    trace: 'bench',
    data: { symbol_list: synthetic.slice(0, 50).map((p) => ({ code: p.code })) },
  }),
);
const batchUrl = `${sim.url}/quote-b-api/batch-kline?token=demo`;
const depthUrl = `${sim.url}/quote-b-api/depth-tick?token=demo&query=${depthQuery}`;

// Baseline: the same bytes from a server that does nothing else.
const batchReply = await (await fetch(batchUrl, { method: 'POST', body: batchBody })).text();
const depthReply = await (await fetch(depthUrl)).text();
const baseline = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const body = req.method === 'POST' ? batchReply : depthReply;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
await new Promise<void>((r) => baseline.listen(0, '127.0.0.1', r));
const baseUrl = `http://127.0.0.1:${(baseline.address() as AddressInfo).port}`;

const bench = new Bench({ time: 1_500, warmupTime: 300 });
bench
  .add('baseline: static 500-group batch-kline body over HTTP', async () => {
    await (await fetch(`${baseUrl}/b`, { method: 'POST', body: batchBody })).text();
  })
  .add('simulator: /batch-kline, 500 groups × 2 one-minute bars', async () => {
    await (await fetch(batchUrl, { method: 'POST', body: batchBody })).text();
  })
  .add('baseline: static 50-code depth body over HTTP', async () => {
    await (await fetch(`${baseUrl}/d`)).text();
  })
  .add('simulator: /depth-tick, 50 codes', async () => {
    await (await fetch(depthUrl)).text();
  });
await bench.run();
console.table(bench.table());

let seed = 1_000;
const warm = new SimMarket(defaultCatalogue(), { seed: 1, historyStartMs: T - 800 * 86_400_000 });
warm.bars('BTCUSDT', 8, T, 500);
const market = new Bench({ time: 3_000, iterations: 3 });
market
  .add('market: 500 daily BTCUSDT bars, cold (new seed, nothing cached)', () => {
    new SimMarket(defaultCatalogue(), { seed: seed++, historyStartMs: T - 800 * 86_400_000 }).bars(
      'BTCUSDT',
      8,
      T,
      500,
    );
  })
  .add('market: 500 daily BTCUSDT bars, warm (closed days cached)', () => {
    warm.bars('BTCUSDT', 8, T + 1_000, 500);
  });
await market.run();
console.table(market.table());

await sim.close();
await new Promise((r) => baseline.close(r));
