import { Worker } from 'node:worker_threads';
import {
  EncodeSession,
  writeAtomically,
  type EncodeFormat,
  type EncodeRequest,
  type EncodeResponse,
  type EncodeResult,
} from './encode-worker.js';
import { transferablesOf, type ColumnBatch } from './column-data.js';
import { concatParquet } from './parquet-concat.js';
import type { ParquetEncoder } from '../dataset-writer.js';

// From source (vitest) the worker entry is the `.ts` file, run by Node's type stripping; built, the `.js`.
const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? './encode-worker.ts' : './encode-worker.js',
  import.meta.url,
);

interface Answer {
  readonly result: EncodeResult;
  readonly bytes?: Uint8Array | undefined;
}

interface Deferred {
  readonly promise: Promise<Answer>;
  readonly resolve: (r: Answer) => void;
  readonly reject: (e: Error) => void;
}

function deferred(): Deferred {
  let resolve!: (r: Answer) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<Answer>((res, rej) => {
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
  /** Sessions ended or pieces sent, not yet answered: while any, the thread keeps the process alive. */
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
    if (res.ok) d.resolve({ result: res.result, bytes: res.bytes });
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

/**
 * Encodes files on up to `threads` of the process's encoder threads (the one with the fewest open
 * files first), or on the calling thread when 0. A file stays on one thread from open to end.
 */
export class EncoderPool {
  private closed = false;

  constructor(
    private readonly threads: number,
    private readonly parquetEncoder: ParquetEncoder = 'wasm',
  ) {}

  open(format: EncodeFormat): EncodeHandle {
    if (this.closed) throw new Error('encoder pool is closed');
    if (this.threads === 0) return new EncodeSession(format, this.parquetEncoder);
    if (this.threads >= 2 && format === 'parquet') return new PieceHandle(this);
    const slot = this.leastBusy();
    const target = slot;
    const sid = nextId++;
    const d = deferred();
    target.sessions.set(sid, d);
    const post = (req: EncodeRequest, transfer?: ArrayBuffer[]): void => {
      // After the thread died the session is already rejected: end() raises that.
      if (target.sessions.has(sid)) target.worker.postMessage(req, transfer);
    };
    post({ op: 'open', sid, format, parquetEncoder: this.parquetEncoder });
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
        return d.promise.then((a) => a.result);
      },
      abort: () => {
        if (done) return;
        done = true;
        post({ op: 'abort', sid });
        target.sessions.delete(sid);
      },
    };
  }

  /** The thread with the fewest open files and pieces, or a new one while fewer than `threads` run. */
  private leastBusy(): Slot {
    let slot: Slot | undefined;
    for (const s of shared.slice(0, this.threads))
      if (slot === undefined || s.sessions.size < slot.sessions.size) slot = s;
    if (slot === undefined || (slot.sessions.size > 0 && shared.length < this.threads)) slot = spawn();
    return slot;
  }

  /** Encodes rows on their own into Parquet bytes on the least busy thread. */
  piece(batch: ColumnBatch): Promise<Uint8Array> {
    const slot = this.leastBusy();
    const sid = nextId++;
    const d = deferred();
    slot.sessions.set(sid, d);
    if (slot.ending++ === 0) slot.worker.ref();
    slot.worker.postMessage(
      { op: 'piece', sid, batch, parquetEncoder: this.parquetEncoder } satisfies EncodeRequest,
      transferablesOf(batch),
    );
    const bytes = d.promise.then((a) => a.bytes!);
    bytes.catch(() => undefined); // raised by end()
    return bytes;
  }

  /** Refuses further files; the shared threads stay (idle, unref'd) for other writers. Idempotent. */
  close(): void {
    this.closed = true;
  }
}

/**
 * A Parquet file whose pieces are encoded in parallel, each on the least busy thread into a
 * file of its own (one row group), and joined in order by rewriting the footer
 * ({@link concatParquet}) before the atomic write on this thread.
 */
class PieceHandle implements EncodeHandle {
  private readonly pieces: Promise<Uint8Array>[] = [];
  private done = false;

  constructor(private readonly pool: EncoderPool) {}

  push(batch: ColumnBatch): void {
    if (!this.done && batch.rows > 0) this.pieces.push(this.pool.piece(batch));
  }

  async end(stagingPath: string, finalPath: string): Promise<EncodeResult> {
    if (this.done) throw new Error('encode session already ended');
    this.done = true;
    if (this.pieces.length === 0) throw new Error('an encode session ended without rows');
    const parts = concatParquet(await Promise.all(this.pieces));
    await writeAtomically(stagingPath, finalPath, parts);
    return { bytes: parts.reduce((n, p) => n + p.length, 0) };
  }

  abort(): void {
    this.done = true;
  }
}
