import { finished } from 'node:stream/promises';
import { Observable, Subject, finalize, of, throwError, concat } from 'rxjs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { BufferOverflowError } from '../errors.js';
import { toAsyncIterable } from './to-async-iterable.js';
import { toReadable } from './to-readable.js';

function tracked<T>(source$: Observable<T>) {
  const state = { subscribed: 0, finalized: 0 };
  const obs$ = new Observable<T>((subscriber) => {
    state.subscribed++;
    return source$.pipe(finalize(() => state.finalized++)).subscribe(subscriber);
  });
  return { obs$, state };
}

describe('toAsyncIterable', () => {
  it('keeps the element type', () => {
    expectTypeOf(toAsyncIterable(of(1, 2))).toEqualTypeOf<AsyncIterable<number>>();
  });

  it('yields every value in order and ends on complete', async () => {
    const out: number[] = [];
    for await (const v of toAsyncIterable(of(1, 2, 3))) out.push(v);
    expect(out).toEqual([1, 2, 3]);
  });

  it('yields the values before an error, then throws it', async () => {
    const out: number[] = [];
    const boom = new Error('boom');
    await expect(
      (async () => {
        for await (const v of toAsyncIterable(
          concat(
            of(1, 2),
            throwError(() => boom),
          ),
        ))
          out.push(v);
      })(),
    ).rejects.toBe(boom);
    expect(out).toEqual([1, 2]);
  });

  it('subscribes only when iteration starts and unsubscribes on break', async () => {
    const subject = new Subject<number>();
    const { obs$, state } = tracked(subject);
    const iterable = toAsyncIterable(obs$);
    expect(state.subscribed).toBe(0);
    const out: number[] = [];
    const loop = (async () => {
      for await (const v of iterable) {
        out.push(v);
        if (v === 2) break;
      }
    })();
    await Promise.resolve();
    subject.next(1);
    subject.next(2);
    subject.next(3);
    await loop;
    expect(out).toEqual([1, 2]);
    expect(state.finalized).toBe(1);
    expect(subject.observed).toBe(false);
  });

  it('waits for values that arrive later', async () => {
    const subject = new Subject<string>();
    const it = toAsyncIterable(subject)[Symbol.asyncIterator]();
    const first = it.next();
    subject.next('a');
    expect(await first).toEqual({ value: 'a', done: false });
    const second = it.next();
    subject.complete();
    expect(await second).toEqual({ value: undefined, done: true });
  });

  it('fails with QF_BUFFER_OVERFLOW instead of buffering without bound', async () => {
    const subject = new Subject<number>();
    const it = toAsyncIterable(subject, { maxBuffered: 2 })[Symbol.asyncIterator]();
    const first = it.next();
    for (let i = 0; i < 5; i++) subject.next(i);
    expect(await first).toEqual({ value: 0, done: false });
    expect(await it.next()).toEqual({ value: 1, done: false });
    expect(await it.next()).toEqual({ value: 2, done: false });
    await expect(it.next()).rejects.toBeInstanceOf(BufferOverflowError);
    expect(subject.observed).toBe(false);
  });
});

describe('toReadable', () => {
  it('streams every value in object mode and ends on complete', async () => {
    const out: unknown[] = [];
    for await (const v of toReadable(of({ a: 1 }, { a: 2 }))) out.push(v);
    expect(out).toEqual([{ a: 1 }, { a: 2 }]);
  });

  it('holds values while the consumer lags and hands them on in order', async () => {
    const subject = new Subject<number>();
    const readable = toReadable(subject, { highWaterMark: 2 });
    const out: number[] = [];
    readable.on('data', (v: number) => {
      out.push(v);
      if (v % 10 === 0) {
        readable.pause();
        setImmediate(() => readable.resume());
      }
    });
    await new Promise((r) => setImmediate(r));
    for (let i = 1; i <= 100; i++) subject.next(i);
    subject.complete();
    await finished(readable);
    expect(out).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });

  it('destroys the stream with the observable error', async () => {
    const boom = new Error('boom');
    const readable = toReadable(throwError(() => boom));
    readable.resume();
    await expect(finished(readable)).rejects.toBe(boom);
  });

  it('unsubscribes when destroyed', async () => {
    const subject = new Subject<number>();
    const { obs$, state } = tracked(subject);
    const readable = toReadable(obs$);
    expect(state.subscribed).toBe(0);
    readable.resume();
    await new Promise((r) => setImmediate(r));
    expect(state.subscribed).toBe(1);
    readable.destroy();
    await new Promise((r) => setImmediate(r));
    expect(state.finalized).toBe(1);
    expect(subject.observed).toBe(false);
  });
});
