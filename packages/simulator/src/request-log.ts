import type { SimEndpoint } from './sim-plans.js';

/** One request as the simulator saw it. Never holds the raw token. */
export interface SimLogEntry {
  /** 1-based arrival order. */
  readonly id: number;
  /** Arrival time on the simulator's clock, epoch ms (the time rate limits use). */
  readonly arrivalMs: number;
  /** Market time at arrival, epoch ms: the same clock, so always equal to `arrivalMs`. */
  readonly marketMs: number;
  readonly method: string;
  /** Path without the query string (so no token). */
  readonly path: string;
  readonly endpoint: SimEndpoint | 'unknown';
  /** `stock`, `general`, or the exchange (`sse`, `nyse`, `nasdaq`) for suspension endpoints. */
  readonly family: 'stock' | 'general' | 'sse' | 'nyse' | 'nasdaq' | undefined;
  /** `plan#hash6` (first 6 hex of the token's SHA-256), `missing` or `unknown#hash6`. */
  readonly token: string;
  readonly plan: string | undefined;
  /** Codes asked (`/kline` 1, `/depth-tick` and `/static_info` list length before cutting). */
  codes: number;
  /** Groups asked (`/batch-kline`). */
  groups: number;
  /**
   * The series asked, `CODE:K` (kline type), in the order asked: `/kline`'s one, each group of a
   * `/batch-kline`. Empty for other endpoints, and when the request was refused before its data
   * was read (a limit, a bad token).
   */
  series: string[];
  /** HTTP status sent (0 when the connection was dropped). */
  status: number;
  /** `ret` sent (non-suspension endpoints), or `undefined`. */
  ret: number | undefined;
  msg: string | undefined;
  /** The limit rule that refused the request (ret 429), if any. */
  refusedBy: string | undefined;
  /** The limit rule the request broke, refused or not (in `limitMode: 'observe'` it was served anyway). */
  violated: string | undefined;
  /** Faults injected into this request. */
  faults: string[];
  trace: string | undefined;
  /** Set once the response has been sent (or the connection dropped). */
  done: boolean;
}

/** A filter on log entries: every given field must match. */
export type SimLogFilter = Partial<
  Pick<
    SimLogEntry,
    'endpoint' | 'family' | 'token' | 'plan' | 'status' | 'ret' | 'refusedBy' | 'method' | 'path'
  >
> & {
  /** Only entries that arrived at or after this time (the simulator's clock). */
  readonly sinceMs?: number;
  /** Only entries with at least one fault of this kind. */
  readonly fault?: string;
};

/** The simulator's request log: an array in arrival order with filter helpers for tests. */
export class RequestLog {
  readonly #entries: SimLogEntry[] = [];
  readonly #limit: number;
  #nextId = 1;

  /** @param limit entries kept (oldest dropped first). @defaultValue 100 000 */
  constructor(limit = 100_000) {
    this.#limit = limit;
  }

  /** @internal */
  push(entry: Omit<SimLogEntry, 'id'>): SimLogEntry {
    const e: SimLogEntry = { id: this.#nextId++, ...entry };
    this.#entries.push(e);
    if (this.#entries.length > this.#limit) this.#entries.splice(0, this.#entries.length - this.#limit);
    return e;
  }

  /** Every entry, in arrival order (a copy). */
  entries(): SimLogEntry[] {
    return [...this.#entries];
  }

  /** Entries matching `filter` (or the predicate). */
  filter(filter: SimLogFilter | ((e: SimLogEntry) => boolean)): SimLogEntry[] {
    const pred = typeof filter === 'function' ? filter : matcher(filter);
    return this.#entries.filter(pred);
  }

  /** Number of entries matching `filter`. */
  count(filter: SimLogFilter | ((e: SimLogEntry) => boolean) = {}): number {
    return this.filter(filter).length;
  }

  /** Entries refused by a rate limit rule (ret 429 from the limiter, not from a forced fault). */
  refused(): SimLogEntry[] {
    return this.#entries.filter((e) => e.refusedBy !== undefined);
  }

  /** Entries that broke a limit rule, whether refused (strict) or served (observe). */
  violations(): SimLogEntry[] {
    return this.#entries.filter((e) => e.violated !== undefined);
  }

  /** The latest entry. */
  last(): SimLogEntry | undefined {
    return this.#entries.at(-1);
  }

  get length(): number {
    return this.#entries.length;
  }

  /** Forgets every entry. */
  clear(): void {
    this.#entries.length = 0;
  }
}

function matcher(f: SimLogFilter): (e: SimLogEntry) => boolean {
  return (e) => {
    for (const key of [
      'endpoint',
      'family',
      'token',
      'plan',
      'status',
      'ret',
      'refusedBy',
      'method',
      'path',
    ] as const) {
      if (f[key] !== undefined && e[key] !== f[key]) return false;
    }
    if (f.sinceMs !== undefined && e.arrivalMs < f.sinceMs) return false;
    if (f.fault !== undefined && !e.faults.includes(f.fault)) return false;
    return true;
  };
}
