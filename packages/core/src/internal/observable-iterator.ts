import type { Observable, Subscription } from 'rxjs';
import { BufferOverflowError } from '../errors.js';

/**
 * One iteration of `toAsyncIterable`: subscribes at the first `next()`, buffers up to
 * `maxBuffered` values for a slower reader, and ends, fails or unsubscribes (`return()`) as the
 * observable or the reader decides. `next` and `return` are bound, as an iterator object's may be
 * called detached.
 */
export class ObservableIterator<T> implements AsyncIterator<T> {
  readonly #source$: Observable<T>;
  readonly #maxBuffered: number;
  readonly #buffer: T[] = [];
  #head = 0;
  #done = false;
  #failure: { error: unknown } | undefined;
  #waiting: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  #subscription: Subscription | undefined;

  constructor(source$: Observable<T>, maxBuffered: number) {
    this.#source$ = source$;
    this.#maxBuffered = maxBuffered;
  }

  readonly next = (): Promise<IteratorResult<T>> => {
    this.#start();
    if (this.#head < this.#buffer.length) return Promise.resolve({ value: this.#take(), done: false });
    if (this.#failure !== undefined) {
      const { error } = this.#failure;
      this.#failure = undefined;
      this.#buffer.length = this.#head = 0;
      return Promise.reject(error);
    }
    if (this.#done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  };

  readonly return = (): Promise<IteratorResult<T>> => {
    this.#stop();
    this.#buffer.length = this.#head = 0;
    this.#failure = undefined;
    const w = this.#waiting;
    this.#waiting = undefined;
    w?.resolve({ value: undefined, done: true });
    return Promise.resolve({ value: undefined, done: true });
  };

  /** Answers a waiting `next()` with a value, the failure or the end, whichever is due. */
  #settle(): void {
    const w = this.#waiting;
    if (w === undefined) return;
    if (this.#head < this.#buffer.length) {
      this.#waiting = undefined;
      w.resolve({ value: this.#take(), done: false });
    } else if (this.#failure !== undefined) {
      this.#waiting = undefined;
      w.reject(this.#failure.error);
    } else if (this.#done) {
      this.#waiting = undefined;
      w.resolve({ value: undefined, done: true });
    }
  }

  #take(): T {
    const buffer = this.#buffer;
    const value = buffer[this.#head] as T;
    buffer[this.#head] = undefined as T; // release the reference
    this.#head++;
    if (this.#head > 1024 && this.#head * 2 > buffer.length) {
      buffer.splice(0, this.#head);
      this.#head = 0;
    }
    return value;
  }

  #stop(): void {
    this.#done = true;
    this.#subscription?.unsubscribe();
  }

  #start(): void {
    if (this.#subscription !== undefined || this.#done) return;
    this.#subscription = this.#source$.subscribe({
      next: (value) => {
        if (this.#done) return;
        if (this.#buffer.length - this.#head >= this.#maxBuffered) {
          this.#failure = { error: new BufferOverflowError(this.#maxBuffered) };
          this.#stop();
        } else this.#buffer.push(value);
        this.#settle();
      },
      error: (error: unknown) => {
        this.#failure = { error };
        this.#done = true;
        this.#settle();
      },
      complete: () => {
        this.#done = true;
        this.#settle();
      },
    });
    if (this.#done) this.#subscription.unsubscribe();
  }
}
