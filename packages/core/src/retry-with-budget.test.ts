import { describe, expect, it } from 'vitest';
import { ManualClock } from './clock.js';
import { QuoteflowError } from './errors.js';
import { retryWithBudget } from './retry-with-budget.js';

/** An attempt that fails `failures` times (recording when it ran on `clock`), then returns 'ok'. */
function flaky(clock: ManualClock, failures: number, error: () => unknown = () => new Error('down')) {
  const at: number[] = [];
  return {
    at,
    attempt: async (n: number) => {
      at.push(clock.now());
      if (n <= failures) throw error();
      return 'ok';
    },
  };
}

/** Runs `promise` while moving `clock` forward 10 ms at a time until it settles. */
async function settle<T>(clock: ManualClock, promise: Promise<T>): Promise<PromiseSettledResult<T>> {
  let result: PromiseSettledResult<T> | undefined;
  void promise.then(
    (value) => (result = { status: 'fulfilled', value }),
    (reason: unknown) => (result = { status: 'rejected', reason }),
  );
  while (result === undefined) await clock.advance(10);
  return result;
}

describe('retryWithBudget', () => {
  it('retries with doubling waits until the attempt succeeds', async () => {
    const clock = new ManualClock(0);
    const f = flaky(clock, 3);
    const got = await settle(
      clock,
      retryWithBudget(f.attempt, { budgetMs: 10_000, baseDelayMs: 100, jitter: 'none', clock }),
    );
    expect(got).toEqual({ status: 'fulfilled', value: 'ok' });
    expect(f.at).toEqual([0, 100, 300, 700]);
  });

  it('makes its last attempt at the end of the budget, then throws the last failure', async () => {
    const clock = new ManualClock(0);
    const f = flaky(clock, Infinity);
    const got = await settle(
      clock,
      retryWithBudget(f.attempt, { budgetMs: 1_000, baseDelayMs: 400, jitter: 'none', clock }),
    );
    expect(got).toMatchObject({ status: 'rejected', reason: { message: 'down' } });
    expect(f.at).toEqual([0, 400, 1_000]);
  });

  it('stops at maxAttempts within the budget', async () => {
    const clock = new ManualClock(0);
    const f = flaky(clock, Infinity);
    const got = await settle(
      clock,
      retryWithBudget(f.attempt, {
        budgetMs: 60_000,
        maxAttempts: 2,
        baseDelayMs: 10,
        jitter: 'none',
        clock,
      }),
    );
    expect(got.status).toBe('rejected');
    expect(f.at).toEqual([0, 10]);
  });

  it('throws a failure that is not retryable at once (by default one that says retryable: false)', async () => {
    const clock = new ManualClock(0);
    const f = flaky(
      clock,
      Infinity,
      () => new QuoteflowError('QF_INVALID_OPTION', 'bad', { retryable: false }),
    );
    await expect(retryWithBudget(f.attempt, { budgetMs: 60_000, clock })).rejects.toMatchObject({
      code: 'QF_INVALID_OPTION',
    });
    const g = flaky(clock, Infinity);
    await expect(
      retryWithBudget(g.attempt, { budgetMs: 60_000, clock, retryable: () => false }),
    ).rejects.toThrow('down');
    expect([f.at.length, g.at.length]).toEqual([1, 1]);
  });

  it('waits a random share of each ceiling with full jitter and tells onRetry', async () => {
    const clock = new ManualClock(0);
    const f = flaky(clock, 2);
    const retries: [number, number][] = [];
    await settle(
      clock,
      retryWithBudget(f.attempt, {
        budgetMs: 10_000,
        baseDelayMs: 100,
        random: () => 0.5,
        clock,
        onRetry: (_error, attempt, delayMs) => retries.push([attempt, delayMs]),
      }),
    );
    expect(retries).toEqual([
      [1, 50],
      [2, 100],
    ]);
  });

  it('ends the wait under way with the signal’s reason when it aborts', async () => {
    const clock = new ManualClock(0);
    const f = flaky(clock, Infinity);
    const stop = new AbortController();
    const running = retryWithBudget(f.attempt, {
      budgetMs: 60_000,
      baseDelayMs: 1_000,
      clock,
      signal: stop.signal,
    });
    await clock.advance(0);
    stop.abort(new Error('stopped'));
    await expect(running).rejects.toThrow('stopped');
    expect(f.at).toEqual([0]);
  });

  it('waits what delayMs says of each failure instead of the backoff, cut short at the budget', async () => {
    const clock = new ManualClock(0);
    const paces = [300, 50, 1_000];
    const f = flaky(clock, 3, () => ({ paceMs: paces.shift() }));
    const got = await settle(
      clock,
      retryWithBudget(f.attempt, {
        budgetMs: 1_000,
        baseDelayMs: 100,
        jitter: 'none',
        delayMs: (error) => (error as { paceMs: number }).paceMs,
        clock,
      }),
    );
    expect(got).toEqual({ status: 'fulfilled', value: 'ok' });
    expect(f.at).toEqual([0, 300, 350, 1_000]);
  });

  it('refuses a negative budget and a zero attempt count', async () => {
    await expect(retryWithBudget(async () => 1, { budgetMs: -1 })).rejects.toMatchObject({
      code: 'QF_INVALID_OPTION',
    });
    await expect(retryWithBudget(async () => 1, { budgetMs: 1, maxAttempts: 0 })).rejects.toMatchObject({
      code: 'QF_INVALID_OPTION',
    });
  });
});
