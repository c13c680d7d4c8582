// Measures the central promise at real speed, as a new user meets it: `quoteflow backfill` of 30
// crypto codes, 1-minute bars, 1,000 bars each, on plan basic (about 90 s of requests, so pages are
// read on both sides of several minute boundaries), then every written row is compared with what
// the service returns long after the bar closed. Prints one JSON line.
//
//   node --import tsx scripts/measure/backfill-finality.ts
//
// The simulator runs in this process on the real clock; the CLI is the built binary in a child
// process (the way a user runs it), so the two share no clock object, only real time.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { firstValueFrom, toArray } from 'rxjs';
import { QuoteflowClient, klineHistory, type Bar } from '@quoteflow/core';
import { startSimulator, syntheticCatalogue, defaultCatalogue } from '@quoteflow/simulator';

const run = promisify(execFile);
const CODES = 30;
const BARS = 1_000;
const root = new URL('../..', import.meta.url).pathname;

const products = [...defaultCatalogue(), ...syntheticCatalogue({ count: 120, classes: ['crypto'] })];
const codes = products
  .filter((p) => p.productClass === 'crypto')
  .slice(0, CODES)
  .map((p) => p.code);
const sim = await startSimulator({
  port: 0,
  tokens: { user: 'basic', truth: 'professional' },
  products,
  seed: 3,
});
const out = await mkdtemp(join(tmpdir(), 'qf-measure-'));
const startedMs = Date.now();
try {
  await run(
    join(root, 'packages/cli/bin/quoteflow'),
    [
      'backfill',
      '--codes',
      codes.join(','),
      '--kline-type',
      '1',
      '--bars',
      String(BARS),
      '--out',
      out,
      '--format',
      'ndjson',
      '--plan',
      'basic',
      '--base-url',
      sim.url,
      '--token',
      'user',
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const seconds = (Date.now() - startedMs) / 1000;
  const rows = new Map<string, { ts: number; row: Record<string, unknown> }[]>();
  for (const e of await readdir(join(out, 'kline'), { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || !e.name.endsWith('.ndjson')) continue;
    for (const line of (await readFile(join(e.parentPath, e.name), 'utf8')).split('\n')) {
      if (line === '') continue;
      const row = JSON.parse(line) as Record<string, unknown> & { code: string; ts: string };
      const list = rows.get(row.code) ?? [];
      list.push({ ts: Date.parse(row.ts), row });
      rows.set(row.code, list);
    }
  }
  const truthClient = new QuoteflowClient({ baseUrl: sim.url, token: 'truth', plan: 'professional' });
  let notFinal = 0;
  let wrongCount = 0;
  let total = 0;
  for (const code of codes) {
    const mine = rows.get(code) ?? [];
    total += mine.length;
    if (mine.length !== BARS) wrongCount++;
    const truth = await firstValueFrom(
      klineHistory(truthClient, { code, klineType: 1, bars: BARS + 200 }).pipe(toArray()),
    );
    const byTs = new Map(truth.filter((b): b is Bar => b.type === 'bar').map((b) => [b.tsMs, b]));
    for (const { ts, row } of mine) {
      const t = byTs.get(ts);
      const same =
        t !== undefined &&
        t.open === row['open'] &&
        t.high === row['high'] &&
        t.low === row['low'] &&
        t.close === row['close'] &&
        t.volume === row['volume'] &&
        t.turnover === row['turnover'];
      if (!same) notFinal++;
    }
  }
  await truthClient.close();
  console.log(
    JSON.stringify({
      codes: CODES,
      barsAsked: BARS,
      plan: 'basic',
      seconds,
      rows: total,
      seriesWithWrongCount: wrongCount,
      rowsNotFinal: notFinal,
      refusals: sim.log.refused().length,
      requests: sim.log.length,
    }),
  );
} finally {
  await sim.close();
  await rm(out, { recursive: true, force: true });
}
