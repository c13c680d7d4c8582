import { Worker } from 'node:worker_threads';
import {
  runEncodeJob,
  type EncodeJob,
  type EncodeRequest,
  type EncodeResponse,
  type EncodeResult,
} from './encode-worker.js';
import { transferablesOf } from './column-data.js';

// From source (vitest) the worker entry is the `.ts` file, run by Node's type stripping; built, the `.js`.
const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? './encode-worker.ts' : './encode-worker.js',
  import.meta.url,
);

interface Slot {
  readonly worker: Worker;
  readonly pending: Map<number, { resolve: (r: EncodeResult) => void; reject: (e: Error) => void }>;
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
  const slot: Slot = { worker, pending: new Map() };
  const fail = (err: Error): void => {
    for (const p of slot.pending.values()) p.reject(err);
    slot.pending.clear();
    const i = shared.indexOf(slot);
    if (i >= 0) shared.splice(i, 1);
  };
  worker.on('message', (res: EncodeResponse) => {
    const p = slot.pending.get(res.id);
    if (p === undefined) return;
    slot.pending.delete(res.id);
    if (slot.pending.size === 0) worker.unref();
    if (res.ok) p.resolve(res.result);
    else p.reject(Object.assign(new Error(res.message), { stack: res.stack }));
  });
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`encoder worker exited with code ${code}`)));
  shared.push(slot);
  return slot;
}

/** Runs encode jobs on up to `threads` of the process's encoder threads (least busy first), or inline when 0. */
export class EncoderPool {
  private closed = false;

  constructor(private readonly threads: number) {}

  async run(job: EncodeJob): Promise<EncodeResult> {
    if (this.closed) throw new Error('encoder pool is closed');
    if (this.threads === 0) return runEncodeJob(job);
    let slot: Slot | undefined;
    for (const s of shared.slice(0, this.threads))
      if (slot === undefined || s.pending.size < slot.pending.size) slot = s;
    if (slot === undefined || (slot.pending.size > 0 && shared.length < this.threads)) slot = spawn();
    const id = nextId++;
    const target = slot;
    return new Promise<EncodeResult>((resolve, reject) => {
      target.pending.set(id, { resolve, reject });
      // A busy thread keeps the process alive until its file is on disk.
      target.worker.ref();
      target.worker.postMessage({ id, job } satisfies EncodeRequest, transferablesOf(job.batch));
    });
  }

  /** Refuses further jobs; the shared threads stay (idle, unref'd) for other writers. Idempotent. */
  close(): void {
    this.closed = true;
  }
}
