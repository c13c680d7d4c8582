import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { systemClock } from '@quoteflow/core';
import { KlineProgress } from './kline-progress.js';
import { Redactor } from './redactor.js';
import { StderrChannel } from './stderr-channel.js';

const CODES = ['A', 'B', 'C', 'D', 'E', 'F'];
const sink = new Writable({ write: (_c, _e, done) => done() });

function progress(): KlineProgress {
  return new KlineProgress(
    new StderrChannel(sink, new Redactor(), false),
    pino({ level: 'silent' }),
    { codes: CODES, klineTypes: [1, 5] },
    { requests: 12, ratePerSecond: 10 },
    systemClock,
    false,
  );
}

const done = (code: string, klineType: 1 | 5) =>
  ({ type: 'backfill-series-done', code, klineType, bars: 0, truncated: false }) as const;

describe('KlineProgress', () => {
  it('counts the series a cluster worker holds after a takeover, not more than it holds', () => {
    const p = progress();
    p.hold('w1', []);
    expect(p.snapshot()).toMatchObject({ worker: 'w1', seriesHeld: 0, seriesBackfilled: '0/0' });
    p.hold('w1', ['A', 'B']);
    p.handle({ type: 'backfill-start', series: 4 });
    p.handle({ type: 'backfill-done', series: 4, durationMs: 1 });
    expect(p.snapshot()).toMatchObject({ seriesHeld: 4, seriesBackfilled: '4/4' });
    // A takeover: two more codes, their series backfilled one by one.
    p.hold('w1', ['A', 'B', 'C', 'D']);
    expect(p.snapshot()).toMatchObject({ seriesHeld: 8, seriesBackfilled: '4/8' });
    for (const code of ['C', 'D']) for (const k of [1, 5] as const) p.handle(done(code, k));
    expect(p.snapshot()).toMatchObject({ seriesHeld: 8, seriesBackfilled: '8/8' });
    // Handed back: what it gave up no longer counts, and taken again it is backfilled again.
    p.hold('w1', ['C', 'D']);
    expect(p.snapshot()).toMatchObject({ seriesHeld: 4, seriesBackfilled: '4/4' });
    p.hold('w1', ['A', 'C', 'D']);
    expect(p.snapshot()).toMatchObject({ seriesHeld: 6, seriesBackfilled: '4/6' });
  });

  it('counts every series of the universe without a cluster', () => {
    const p = progress();
    p.handle(done('A', 1));
    expect(p.snapshot()).toMatchObject({ seriesBackfilled: '1/12' });
    expect(p.snapshot()).not.toHaveProperty('worker');
    p.handle({ type: 'backfill-done', series: 12, durationMs: 1 });
    expect(p.snapshot()).toMatchObject({ seriesBackfilled: '12/12' });
  });
});
