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
  worker: Worker;
  pending: Map<number, { resolve: (r: EncodeResult) => void; reject: (e: Error) => void }>;
}

/** Runs encode jobs on `threads` worker threads (least busy first), or inline when `threads` is 0. */
export class EncoderPool {
  private readonly slots: Slot[] = [];
  private nextId = 0;
  private closed = false;

  constructor(private readonly threads: number) {}

  /** Jobs accepted and not yet finished. */
  get inFlight(): number {
    return this.slots.reduce((n, s) => n + s.pending.size, 0) + this.inline;
  }
  private inline = 0;

  async run(job: EncodeJob): Promise<EncodeResult> {
    if (this.closed) throw new Error('encoder pool is closed');
    if (this.threads === 0) {
      this.inline++;
      try {
        return await runEncodeJob(job);
      } finally {
        this.inline--;
      }
    }
    const slot = this.pick();
    const id = this.nextId++;
    return new Promise<EncodeResult>((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      // A busy worker keeps the process alive; an idle one must not.
      slot.worker.ref();
      slot.worker.postMessage({ id, job } satisfies EncodeRequest, transferablesOf(job.batch));
    });
  }

  private pick(): Slot {
    let best: Slot | undefined;
    for (const s of this.slots) if (best === undefined || s.pending.size < best.pending.size) best = s;
    if (best !== undefined && (best.pending.size === 0 || this.slots.length >= this.threads)) return best;
    return this.spawn();
  }

  private spawn(): Slot {
    const worker = new Worker(WORKER_URL, { workerData: { quoteflowEncoder: true } });
    worker.unref();
    const slot: Slot = { worker, pending: new Map() };
    const settleAll = (err: Error): void => {
      for (const p of slot.pending.values()) p.reject(err);
      slot.pending.clear();
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots.splice(i, 1);
    };
    worker.on('message', (res: EncodeResponse) => {
      const p = slot.pending.get(res.id);
      if (p === undefined) return;
      slot.pending.delete(res.id);
      if (slot.pending.size === 0) worker.unref();
      if (res.ok) p.resolve(res.result);
      else p.reject(Object.assign(new Error(res.message), { stack: res.stack }));
    });
    worker.on('error', (err) => settleAll(err));
    worker.on('exit', (code) => settleAll(new Error(`encoder worker exited with code ${code}`)));
    this.slots.push(slot);
    return slot;
  }

  /** Waits for nothing: call after every job settled. Terminates the threads; idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }
}
