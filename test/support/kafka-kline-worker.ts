// A process producing K-lines through KafkaKlineSink, for test/sinks-kafka-exactly-once-crash.test.ts.
// It opens the sink with QF_TEST_TXN_ID, resumes every series from the sink's own watermark (writing
// the last QF_TEST_REPLAY committed bars again, as a pipeline replaying history does), then per round
// writes QF_TEST_CHUNK bars of each series (forming updates and a repeat among them), flushes, says
// `sent` (its records are on the broker, in the open transaction), checkpoints and says `committed`.
// With QF_TEST_STEP=1 it waits for a line on stdin after each of those, so the test can kill it
// exactly there. One JSON line per event on stdout.
import { seriesKey } from '@quoteflow/core';
import { createInterface } from 'node:readline';
import { KafkaKlineSink, type KafkaDriverName } from '@quoteflow/sinks';
import { barIndexOf, klineBar } from './kafka-kline-bars.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`worker: ${name} is not set`);
  return value;
};
const say = (event: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(event)}\n`);

const codes = env('QF_TEST_CODES').split(',');
const bars = Number(env('QF_TEST_BARS'));
const chunk = Number(env('QF_TEST_CHUNK'));
const replay = Number(env('QF_TEST_REPLAY'));
const step = process.env['QF_TEST_STEP'] === '1';
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const go = async (): Promise<void> => {
  if (step) await lines.next();
};

const sink = await KafkaKlineSink.open({
  brokers: env('QF_TEST_BROKERS'),
  driver: env('QF_TEST_DRIVER') as KafkaDriverName,
  topicPrefix: env('QF_TEST_PREFIX'),
  transactionalId: env('QF_TEST_TXN_ID'),
  partitions: 3,
  replicationFactor: 1,
  transactionTimeoutMs: 20_000,
  watermarkReadTimeoutMs: 30_000,
});
const next = new Map(
  codes.map((code) => {
    const last = sink.watermarks()?.get(seriesKey(code, 1))?.last;
    return [code, last === undefined ? 0 : Math.max(0, barIndexOf(last) + 1 - replay)];
  }),
);
say({ event: 'opened', resume: Object.fromEntries(next) });
for (let round = 0; [...next.values()].some((i) => i < bars); round++) {
  for (const code of codes) {
    const from = next.get(code)!;
    const to = Math.min(bars, from + chunk);
    for (let i = from; i < to; i++) {
      sink.write(klineBar(code, i));
      if (i % 3 === 0 && i + 1 < bars) sink.write(klineBar(code, i + 1, false));
      if (i % 7 === 0 && i > 0) sink.write(klineBar(code, i - 1)); // a repeat: dropped
    }
    next.set(code, to);
  }
  await sink.flush();
  say({ event: 'sent', round });
  await go();
  const cp = await sink.checkpoint();
  say({ event: 'committed', round, bars: cp.closedBars });
  await go();
}
await sink.close();
say({ event: 'done', stats: sink.stats() });
process.exit(0);
