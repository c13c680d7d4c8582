import type { EndpointKind } from '../../plans.js';

/** What the fair queue needs of a job. */
export interface FairQueueItem {
  readonly sourceId: string;
  readonly endpoint: EndpointKind;
  /** Set when the job left the queue some other way (aborted): skipped lazily. */
  removed: boolean;
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

interface Source<T> {
  readonly id: string;
  readonly lanes: Map<EndpointKind, Deque<T>>;
  /** Queued, not removed jobs. */
  queued: number;
  /** Endpoints this source used, in round-robin order. */
  laneOrder: EndpointKind[];
  nextLane: number;
}

/**
 * One priority's queue: round-robin across `sourceId`s, and inside a source round-robin across
 * endpoints (FIFO per source and endpoint), so that a source blocked on one endpoint's rule does
 * not hold back its requests to another endpoint.
 */
export class FairQueue<T extends FairQueueItem> {
  private readonly sources = new Map<string, Source<T>>();
  private ring: string[] = [];
  private next = 0;
  /** Sources with queued jobs. */
  private busy = 0;
  /** Jobs queued and not removed. */
  size = 0;
  /** Queued (not removed) jobs per endpoint. */
  readonly perEndpoint = new Map<EndpointKind, number>();

  push(job: T): void {
    this.lane(job).push(job);
    this.count(job, 1);
  }

  /** Puts a job that was taken but could not start back at the head of its lane. */
  pushFront(job: T): void {
    this.lane(job).unshift(job);
    this.count(job, 1);
  }

  /** Marks a queued job removed (it is skipped when it reaches the head). */
  remove(job: T): void {
    if (job.removed) return;
    job.removed = true;
    this.count(job, -1);
  }

  /**
   * The heads of every lane, in fair order: sources from the round-robin pointer on, and inside
   * each source its lanes from that source's pointer on.
   */
  *candidates(): Generator<T> {
    const ring = this.ring.slice();
    const start = ring.length === 0 ? 0 : this.next % ring.length;
    for (let i = 0; i < ring.length; i++) {
      const source = this.sources.get(ring[(start + i) % ring.length]!);
      if (source === undefined) continue;
      const order = source.laneOrder.slice();
      const lane0 = source.nextLane;
      for (let j = 0; j < order.length; j++) {
        const head = this.head(source, order[(lane0 + j) % order.length]!);
        if (head !== undefined) yield head;
      }
    }
  }

  /** Takes `job` (a head from {@link candidates}) out and moves both round-robin pointers past it. */
  take(job: T): void {
    const source = this.sources.get(job.sourceId)!;
    const lane = source.lanes.get(job.endpoint)!;
    lane.shift();
    this.count(job, -1);
    // Idle sources and lanes keep their place in the rings, so a source that is served and
    // refilled at once does not jump the queue.
    source.nextLane = (source.laneOrder.indexOf(job.endpoint) + 1) % source.laneOrder.length;
    this.next = this.ring.indexOf(source.id) + 1; // taken modulo the ring length when read
  }

  /** Every job still queued (for close). */
  drain(): T[] {
    const all: T[] = [];
    for (const source of this.sources.values()) {
      for (const lane of source.lanes.values()) {
        while (lane.length > 0) {
          const job = lane.shift()!;
          if (!job.removed) all.push(job);
        }
      }
    }
    this.sources.clear();
    this.ring = [];
    this.next = 0;
    this.size = 0;
    this.busy = 0;
    this.perEndpoint.clear();
    return all;
  }

  private lane(job: T): Deque<T> {
    let source = this.sources.get(job.sourceId);
    if (source === undefined) {
      this.pruneIdleSources();
      source = { id: job.sourceId, lanes: new Map(), laneOrder: [], nextLane: 0, queued: 0 };
      this.sources.set(job.sourceId, source);
      this.ring.push(job.sourceId);
    }
    let lane = source.lanes.get(job.endpoint);
    if (lane === undefined) {
      lane = new Deque<T>();
      source.lanes.set(job.endpoint, lane);
      source.laneOrder.push(job.endpoint);
    }
    return lane;
  }

  private head(source: Source<T>, endpoint: EndpointKind): T | undefined {
    const lane = source.lanes.get(endpoint);
    if (lane === undefined) return undefined;
    while (lane.length > 0 && lane.peek()!.removed) lane.shift();
    return lane.peek();
  }

  /** Forgets sources with nothing queued once they outnumber the busy ones (bounded memory). */
  private pruneIdleSources(): void {
    if (this.ring.length < 64 || this.ring.length < 2 * this.busy) return;
    const kept: string[] = [];
    let next = 0;
    const pointer = this.ring.length === 0 ? 0 : this.next % this.ring.length;
    this.ring.forEach((id, index) => {
      const source = this.sources.get(id)!;
      if (source.queued > 0) {
        if (index < pointer) next++;
        kept.push(id);
      } else this.sources.delete(id);
    });
    this.ring = kept;
    this.next = next;
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
