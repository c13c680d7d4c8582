import type { EndpointKind } from '../../plans.js';

/** What the fair queue needs of a job. */
export interface FairQueueItem {
  readonly sourceId: string;
  readonly endpoint: EndpointKind;
  /** Set when the job left the queue some other way (aborted): skipped lazily. */
  removed: boolean;
  /** Set by {@link FairQueue.take}: the turn it took, to give back if the job comes back. */
  taken: { readonly at: number; readonly source: number; readonly lane: number } | undefined;
}

/** FIFO with O(1) shift and unshift. */
class Deque<T> {
  private items: (T | undefined)[] = [];
  private head = 0;
  get length(): number {
    return this.items.length - this.head;
  }
  peek(): T | undefined {
    return this.items[this.head];
  }
  push(item: T): void {
    this.items.push(item);
  }
  shift(): T | undefined {
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
  unshift(item: T): void {
    if (this.head > 0) this.items[--this.head] = item;
    else this.items.unshift(item);
  }
}

interface Lane<T> {
  readonly endpoint: EndpointKind;
  readonly jobs: Deque<T>;
  /** When a job of this lane was last taken ({@link FairQueue.take} count; 0 = never). */
  served: number;
}

interface Source<T> {
  readonly id: string;
  /** Arrival order of the source: breaks ties between sources never served. */
  readonly seq: number;
  readonly lanes: Map<EndpointKind, Lane<T>>;
  /** Queued, not removed jobs. */
  queued: number;
  /** When a job of this source was last taken (0 = never). */
  served: number;
}

const byService = <X extends { served: number }>(a: X, b: X): number => a.served - b.served;

/**
 * One priority's queue, fair between `sourceId`s: the scheduler takes the first of
 * {@link candidates} whose endpoint may start now, and candidates come least recently served
 * source first (sources never served in arrival order), and inside a source least recently
 * served endpoint first (FIFO per source and endpoint). With every request costing one start,
 * that is round-robin in which a source keeps its turn while its endpoint is blocked: so a source
 * whose next job may start is served before any other source of the queue is served twice (at
 * most `busy sources - 1` others come first), also when its endpoint is open only now and then
 * (`/batch-kline` beside `/depth-tick`), and a source blocked on one endpoint does not hold back
 * its requests to another. A source earns nothing while it has nothing queued: after one start it
 * is the most recently served again.
 */
export class FairQueue<T extends FairQueueItem> {
  private readonly sources = new Map<string, Source<T>>();
  /** Starts taken so far: the clock of `served`. */
  private taken = 0;
  private nextSeq = 0;
  /** Sources with queued jobs. */
  private busy = 0;
  /** Jobs queued and not removed. */
  size = 0;
  /** Queued (not removed) jobs per endpoint. */
  readonly perEndpoint = new Map<EndpointKind, number>();

  push(job: T): void {
    this.lane(job).jobs.push(job);
    this.count(job, 1);
  }

  /**
   * Puts a job that was taken but could not start back at the head of its lane, and gives its
   * source and lane their turn back (unless they were served again since).
   */
  pushFront(job: T): void {
    const lane = this.lane(job);
    lane.jobs.unshift(job);
    this.count(job, 1);
    const taken = job.taken;
    job.taken = undefined;
    if (taken === undefined) return;
    const source = this.sources.get(job.sourceId)!;
    if (source.served === taken.at) source.served = taken.source;
    if (lane.served === taken.at) lane.served = taken.lane;
  }

  /** Jobs of `sourceId` queued and not removed. */
  queuedOf(sourceId: string): number {
    return this.sources.get(sourceId)?.queued ?? 0;
  }

  /** The ids of the sources with jobs queued. */
  *busySources(): Generator<string> {
    for (const source of this.sources.values()) if (source.queued > 0) yield source.id;
  }

  /** Marks a queued job removed (it is skipped when it reaches the head). */
  remove(job: T): void {
    if (job.removed) return;
    job.removed = true;
    this.count(job, -1);
  }

  /** The heads of every lane, least recently served source first, then its least recently served lane. */
  *candidates(): Generator<T> {
    const sources = [...this.sources.values()]
      .filter((source) => source.queued > 0)
      .sort((a, b) => byService(a, b) || a.seq - b.seq);
    for (const source of sources) {
      // Map order is lane creation order: the stable sort keeps it among lanes never served.
      for (const lane of [...source.lanes.values()].sort(byService)) {
        const head = this.head(lane);
        if (head !== undefined) yield head;
      }
    }
  }

  /** Takes `job` (a head from {@link candidates}) out, and marks its source and lane served now. */
  take(job: T): void {
    const source = this.sources.get(job.sourceId)!;
    const lane = source.lanes.get(job.endpoint)!;
    lane.jobs.shift();
    this.count(job, -1);
    const at = ++this.taken;
    job.taken = { at, source: source.served, lane: lane.served };
    source.served = lane.served = at;
  }

  /** Every job still queued (for close). */
  drain(): T[] {
    const all: T[] = [];
    for (const source of this.sources.values()) {
      for (const lane of source.lanes.values()) {
        while (lane.jobs.length > 0) {
          const job = lane.jobs.shift()!;
          if (!job.removed) all.push(job);
        }
      }
    }
    this.sources.clear();
    this.size = 0;
    this.busy = 0;
    this.perEndpoint.clear();
    return all;
  }

  private lane(job: T): Lane<T> {
    let source = this.sources.get(job.sourceId);
    if (source === undefined) {
      this.pruneIdleSources();
      source = { id: job.sourceId, seq: this.nextSeq++, lanes: new Map(), queued: 0, served: 0 };
      this.sources.set(job.sourceId, source);
    }
    let lane = source.lanes.get(job.endpoint);
    if (lane === undefined) {
      lane = { endpoint: job.endpoint, jobs: new Deque<T>(), served: 0 };
      source.lanes.set(job.endpoint, lane);
    }
    return lane;
  }

  private head(lane: Lane<T>): T | undefined {
    while (lane.jobs.length > 0 && lane.jobs.peek()!.removed) lane.jobs.shift();
    return lane.jobs.peek();
  }

  /**
   * Forgets sources with nothing queued once they outnumber the busy ones (bounded memory). A
   * forgotten source that comes back counts as never served, which is at most one start early.
   */
  private pruneIdleSources(): void {
    if (this.sources.size < 64 || this.sources.size < 2 * this.busy) return;
    for (const [id, source] of this.sources) if (source.queued === 0) this.sources.delete(id);
  }

  private count(job: T, delta: number): void {
    this.size += delta;
    const source = this.sources.get(job.sourceId);
    if (source !== undefined) {
      if (source.queued === 0 && delta > 0) this.busy++;
      source.queued += delta;
      if (source.queued === 0 && delta < 0) this.busy--;
    }
    this.perEndpoint.set(job.endpoint, (this.perEndpoint.get(job.endpoint) ?? 0) + delta);
  }
}
