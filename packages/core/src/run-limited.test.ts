import { describe, expect, it } from 'vitest';
import { runLimited } from './run-limited.js';

/** A promise with its resolve and reject outside. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (err: Error) => void } {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('runLimited', () => {
  it('runs every item, never more than `limit` at once', async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    await runLimited([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      most = Math.max(most, ++running);
      await turn();
      running--;
      done.push(n);
    });
    expect(most).toBe(3);
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('rejects with the first failure once the items in flight settled, starting none after it', async () => {
    const started: number[] = [];
    const gates = [deferred(), deferred(), deferred()];
    let settled = false;
    const run = runLimited([0, 1, 2, 3, 4], 2, async (n) => {
      started.push(n);
      await gates[n]!.promise;
      if (n === 1) settled = true;
    });
    let runSettled = false;
    void run.catch(() => undefined).finally(() => (runSettled = true));
    await turn();
    gates[0]!.reject(new Error('item 0'));
    await turn();
    expect(started).toEqual([0, 1]);
    expect(runSettled).toBe(false); // item 1 is still in flight
    gates[1]!.resolve();
    await expect(run).rejects.toThrow('item 0');
    expect(settled).toBe(true);
    expect(started).toEqual([0, 1]);
  });

  it('starts nothing more once the signal aborts', async () => {
    const controller = new AbortController();
    const started: number[] = [];
    await runLimited(
      [0, 1, 2, 3],
      1,
      async (n) => {
        started.push(n);
        if (n === 1) controller.abort();
      },
      controller.signal,
    );
    expect(started).toEqual([0, 1]);
  });
});
