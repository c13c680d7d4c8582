import { Worker } from 'node:worker_threads';
import type * as EncodeWorkerModule from './encode-worker.js';
import type {
  EncodeFormat,
  EncodeRequest,
  EncodeResponse,
  EncodeResult,
  EncodeSession,
} from './encode-worker.js';
import { transferablesOf, type ColumnBatch } from './column-data.js';

// From source (vitest) the worker entry is the `.ts` file, run by Node's type stripping; built, the `.js`.
const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? './encode-worker.ts' : './encode-worker.js',
  import.meta.url,
);

interface Deferred {
  readonly promise: Promise<EncodeResult>;
  readonly resolve: (r: EncodeResult) => void;
  readonly reject: (e: Error) => void;
}

function deferred(): Deferred {
  let resolve!: (r: EncodeResult) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<EncodeResult>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Raised by end(); a session that is never ended (aborted) must not leave an unhandled rejection.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

interface Slot {
  readonly worker: Worker;
  /** Open sessions (from open() until their end() settles), by session id. */
  readonly sessions: Map<number, Deferred>;
  /** Sessions ended, not yet answered: while any, the thread keeps the process alive. */
  ending: number;
}

// Encoder threads are shared by every writer of the process: compiling parquet-wasm and letting V8
// tier its hot code up costs a second or more per thread (measured: a cold thread encodes 1M rows
// in ~1.7 s, a warm one in ~0.9 s), which a fresh thread per writer would pay again and again.
// Idle threads are unref'd, so they never keep the process alive.
const shared: Slot[] = [];
let nextId = 0;

function spawn(): Slot {
  const worker = new Worker(WORKER_URL, { workerData: { quoteflowEncoder: true } });
  worker.unref();
  const slot: Slot = { worker, sessions: new Map(), ending: 0 };
  const fail = (err: Error): void => {
    for (const d of slot.sessions.values()) d.reject(err);
    slot.sessions.clear();
    const i = shared.indexOf(slot);
    if (i >= 0) shared.splice(i, 1);
  };
  worker.on('message', (res: EncodeResponse) => {
    const d = slot.sessions.get(res.sid);
    if (d === undefined) return;
    slot.sessions.delete(res.sid);
    if (--slot.ending === 0) worker.unref();
    if (res.ok) d.resolve(res.result);
    else d.reject(Object.assign(new Error(res.message), { stack: res.stack }));
  });
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`encoder worker exited with code ${code}`)));
  shared.push(slot);
  return slot;
}

/** One file being encoded: its rows in order, then `end()` (or `abort()`), exactly once. */
export interface EncodeHandle {
  /** Hands the next rows over (their buffers move to the encoder thread). */
  push(batch: ColumnBatch): void;
  /** Encodes the rest and writes the file atomically; rejects with the first encoding failure. */
  end(stagingPath: string, finalPath: string): Promise<EncodeResult>;
  /** Drops the file. */
  abort(): void;
}

// The calling thread's encoder (a pool of 0 threads), imported at its first file: it loads
// apache-arrow and parquet-wasm, optional peer dependencies that importing the package must not need.
let inline: typeof EncodeWorkerModule | undefined;

/** A file encoded on the calling thread; rows pushed before the encoder has loaded wait for it. */
function inlineSession(format: EncodeFormat): EncodeHandle {
  if (inline !== undefined) return new inline.EncodeSession(format);
  const waiting: ColumnBatch[] = [];
  let session: EncodeSession | undefined;
  const ready = import('./encode-worker.js').then((m) => {
    inline = m;
    session = new m.EncodeSession(format);
    for (const batch of waiting.splice(0)) session.push(batch);
    return session;
  });
  // Raised by end(); a file aborted before the encoder loaded must not leave an unhandled rejection.
  ready.catch(() => undefined);
  return {
    push: (batch) => (session === undefined ? void waiting.push(batch) : session.push(batch)),
    end: async (stagingPath, finalPath) => (await ready).end(stagingPath, finalPath),
    abort: () =>
      void ready.then(
        (s) => s.abort(),
        () => undefined,
      ),
  };
}

/**
 * Encodes files on up to `threads` of the process's encoder threads (the one with the fewest open
 * files first), or on the calling thread when 0. A file stays on one thread from open to end, so
 * several threads help when several files are open at once (partitions, datasets).
 */
export class EncoderPool {
  private closed = false;

  constructor(private readonly threads: number) {}

  open(format: EncodeFormat): EncodeHandle {
    if (this.closed) throw new Error('encoder pool is closed');
    if (this.threads === 0) return inlineSession(format);
    const target = this.leastBusy();
    const sid = nextId++;
    const d = deferred();
    target.sessions.set(sid, d);
    const post = (req: EncodeRequest, transfer?: ArrayBuffer[]): void => {
      // After the thread died the session is already rejected: end() raises that.
      if (target.sessions.has(sid)) target.worker.postMessage(req, transfer);
    };
    post({ op: 'open', sid, format });
    let done = false;
    return {
      push: (batch) => {
        if (!done) post({ op: 'push', sid, batch }, transferablesOf(batch));
      },
      end: (stagingPath, finalPath) => {
        if (done) throw new Error('encode session already ended');
        done = true;
        if (target.sessions.has(sid)) {
          // A thread with a file to finish keeps the process alive until the file is on disk.
          if (target.ending++ === 0) target.worker.ref();
          post({ op: 'end', sid, stagingPath, finalPath });
        }
        return d.promise;
      },
      abort: () => {
        if (done) return;
        done = true;
        post({ op: 'abort', sid });
        target.sessions.delete(sid);
      },
    };
  }

  /** The thread with the fewest open files, or a new one while fewer than `threads` run. */
  private leastBusy(): Slot {
    let slot: Slot | undefined;
    for (const s of shared.slice(0, this.threads))
      if (slot === undefined || s.sessions.size < slot.sessions.size) slot = s;
    if (slot === undefined || (slot.sessions.size > 0 && shared.length < this.threads)) slot = spawn();
    return slot;
  }

  /** Refuses further files; the shared threads stay (idle, unref'd) for other writers. Idempotent. */
  close(): void {
    this.closed = true;
  }
}
