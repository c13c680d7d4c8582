// The simulator of `pnpm bench soak`, in a process of its own (so the CLI processes' figures are
// theirs alone) on the run's shared accelerated clock (QF_TEST_CLOCK). Started with `fork`: it
// answers the harness over the IPC channel with the requests it served per day of its daily limit
// (Asia/Shanghai), the refusals among them, and the market's closed bars for the final check.
import { appendFileSync } from 'node:fs';
import { defaultCatalogue, startSimulator, syntheticCatalogue, type SimHalt } from '@quoteflow/simulator';
import { clockFromEnv } from '../../../../test/support/shared-clock.js';
import type { SoakSimConfig, SoakSimReply, SoakSimRequest, SoakDayCount } from './soak-sim-protocol.js';

const config = JSON.parse(process.env['SOAK_SIM_CONFIG'] ?? '{}') as SoakSimConfig;
const clock = clockFromEnv();
if (clock === undefined) throw new Error('soak-sim: QF_TEST_CLOCK is not set');
const sim = await startSimulator({
  port: 0,
  clock,
  seed: config.seed,
  tokens: { [config.token]: 'professional' },
  products: [...defaultCatalogue(), ...syntheticCatalogue({ count: config.synthetic })],
  halts: config.halts as readonly SimHalt[],
});

/** Requests per Shanghai date (the simulator's daily reset), by endpoint, with refusals. */
const days = new Map<string, SoakDayCount>();
const shanghaiDate = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Shanghai' });
let seenId = 0;

/** Counts the log's entries since the last call (it keeps the newest 100,000; drained every second). */
function drain(): void {
  const lines: string[] = [];
  for (const e of sim.log.filter((x) => x.id > seenId)) {
    if (!e.done) break;
    seenId = e.id;
    if (config.requestLogFile !== undefined)
      lines.push(`${e.arrivalMs}\t${e.endpoint}\t${e.groups || e.codes}\t${e.refusedBy ?? ''}`);
    const date = shanghaiDate.format(e.arrivalMs);
    let day = days.get(date);
    if (day === undefined) days.set(date, (day = { date, requests: 0, refused: 0, byEndpoint: {} }));
    day.requests++;
    if (e.refusedBy !== undefined) day.refused++;
    day.byEndpoint[e.endpoint] = (day.byEndpoint[e.endpoint] ?? 0) + 1;
  }
  if (lines.length > 0) appendFileSync(config.requestLogFile!, `${lines.join('\n')}\n`);
}
const drainer = setInterval(drain, 1_000);

const reply = (message: SoakSimReply): void => void process.send?.(message);
process.on('message', (m: SoakSimRequest) => {
  if (m.type === 'counts') {
    drain();
    reply({ type: 'counts', id: m.id, days: [...days.values()] });
  } else if (m.type === 'bars') {
    // Closed bars of a series starting in [fromMs, toMs] as the service serves them (none in a
    // halt), the close as the wire rounds it.
    const product = sim.market.product(m.code);
    const decimals = product?.priceDecimals ?? 8;
    const halted = (startMs: number): boolean =>
      config.halts.some((h) => h.code === m.code && startMs >= h.fromMs && startMs < h.toMs);
    const bars = sim.market
      .bars(m.code, m.klineType, m.nowMs, m.count, m.toMs)
      .filter((b) => !b.forming && b.startMs >= m.fromMs && b.startMs <= m.toMs && !halted(b.startMs))
      .map((b): [number, number] => [b.startMs, Number(b.close.toFixed(decimals))]);
    reply({ type: 'bars', id: m.id, bars });
  } else if (m.type === 'close') {
    clearInterval(drainer);
    drain();
    void sim.close().then(() => {
      reply({ type: 'closed', id: m.id, days: [...days.values()] });
      process.disconnect();
    });
  }
});
reply({ type: 'ready', id: 0, url: sim.url });
