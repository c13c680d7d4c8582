import { defer, Observable, take, throwError } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ManualClock, QuoteflowError } from '@quoteflow/core';
import { InvalidCodeError } from '@quoteflow/core/internal';
import { retryTransient } from './retry-transient.js';

const transient = (n: number) => new QuoteflowError('QF_NETWORK', `down ${n}`, { retryable: true });

describe('retryTransient', () => {
  it('subscribes again delayMs of the clock after each transient failure, outage after outage', async () => {
    const clock = new ManualClock(0);
    const log: string[] = [];
    let subscriptions = 0;
    // Fails twice, then gives a value and fails again (a second outage), then gives values.
    const source = defer(() => {
      const n = ++subscriptions;
      if (n <= 2 || n === 4) return throwError(() => transient(n));
      return new Observable<number>((s) => {
        s.next(n);
        if (n === 3) s.error(transient(n));
      });
    });
    const sub = source
      .pipe(
        retryTransient({
          delayMs: 1_000,
          clock,
          onRetry: (e) => log.push(`${clock.now()} retry ${(e as Error).message}`),
        }),
      )
      .subscribe((v) => log.push(`${clock.now()} value ${v}`));
    await clock.advance(10_000);
    sub.unsubscribe();
    expect(log).toEqual([
      '0 retry down 1',
      '1000 retry down 2',
      '2000 value 3',
      '2000 retry down 3',
      '3000 retry down 4',
      '4000 value 5',
    ]);
  });

  it('lets a fatal failure through as the stream’s error, without a retry', async () => {
    const clock = new ManualClock(0);
    const retries: unknown[] = [];
    let error: unknown;
    throwError(
      () =>
        new InvalidCodeError({ endpoint: 'kline', ret: 600, msg: 'no such code', trace: 't', status: 200 }),
    )
      .pipe(retryTransient({ delayMs: 1_000, clock, onRetry: (e) => retries.push(e) }))
      .subscribe({ error: (e: unknown) => (error = e) });
    await clock.advance(0);
    expect(error).toMatchObject({ code: 'QF_INVALID_CODE' });
    expect(retries).toEqual([]);
  });

  it('ends a source subscribed again when its first value is taken at once', async () => {
    const clock = new ManualClock(0);
    let subscriptions = 0;
    const live = new Set<number>();
    const source = new Observable<number>((s) => {
      const n = ++subscriptions;
      if (n === 1) {
        s.error(transient(n));
        return;
      }
      live.add(n);
      s.next(n); // taken by take(1): the unsubscribe comes while this subscribe still runs
      return () => live.delete(n);
    });
    source.pipe(retryTransient({ delayMs: 1_000, clock, onRetry: () => {} }), take(1)).subscribe();
    await clock.advance(5_000);
    expect(subscriptions).toBe(2);
    expect([...live]).toEqual([]);
  });
});
