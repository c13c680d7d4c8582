/**
 * What a writer does at a claim when another live writer owns one of the series: `'fail'`
 * (`QF_OWNED`, naming the table, the series and that writer), `'wait'` (until that writer releases
 * them or its lease runs out, then claims), `'take-over'` (claims at once: a cluster's own lease
 * gave it the series, and the log refuses the previous owner's next commit).
 */
export const IF_OWNED = ['fail', 'wait', 'take-over'] as const;
export type IfOwned = (typeof IF_OWNED)[number];

/**
 * A writer of a Delta table as its claims record it (`domainMetadata` `quoteflow.writer.<id>`,
 * written with its first claim, rewritten by each of its commits, removed by its release): who it
 * is, for the messages of another writer that meets its claims, and how another judges whether it
 * still lives.
 */
export interface TableWriter {
  /** The committer's id (`host~pid~random~n`), as each of its commits names it. */
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  /**
   * When its process started, on Linux as `boot id/pid namespace/start tick`: a process of the
   * same machine with this pid but another start is a successor that reused the pid.
   */
  readonly started?: string;
  /** When it made its first claim (epoch ms, its own clock). */
  readonly sinceMs: number;
  /** Its claims lapse once a writer on another machine has not seen {@link renewal} advance for this long (ms). */
  readonly leaseMs: number;
  /** Counts its renewals (each of its commits is one). */
  readonly renewal: number;
  /** When it last renewed (epoch ms, its own clock): for messages, and to see a claim abandoned long ago. */
  readonly renewedMs: number;
  /** What it is (`quoteflow sync`), for messages. */
  readonly command?: string;
}

/** How a writer claims series of a table (the options of `DatasetLog.claim` and of the sinks). */
export interface TableClaimOptions {
  /**
   * @defaultValue `'fail'`; a sink or dataset writer given a `fence` (a cluster worker's lease)
   * defaults to `'take-over'`: that lease decided who writes the series.
   */
  readonly ifOwned?: IfOwned;
  /** Stops a wait (`ifOwned: 'wait'`): the claim rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Told once when the claim waits for another writer, with a sentence naming it. */
  readonly onWaiting?: (message: string) => void;
}

/** How a writer of a Delta table (a sink, a dataset writer) claims its series and keeps them. */
export interface TableWriterOptions extends TableClaimOptions {
  /**
   * Its claims stay its own this long without a renewal, for writers on other machines (one on
   * the same machine sees its process end at once). @defaultValue 300,000 ms
   */
  readonly leaseMs?: number;
  /** What it is (`quoteflow sync`), shown to another writer that meets its claims. */
  readonly command?: string;
}

/** What a writer does when a series is owned: `ifOwned`, or with a `fence` (a cluster's lease) `'take-over'`. */
export function ifOwnedOf(options: TableClaimOptions & { readonly fence?: () => boolean }): IfOwned {
  return options.ifOwned ?? (options.fence === undefined ? 'fail' : 'take-over');
}

/** Defaults of a table writer's claims. */
export const TABLE_WRITER_DEFAULTS = {
  ifOwned: 'fail',
  /**
   * A writer on another machine that died without a word is taken over this long after its last
   * renewal was seen; an idle writer renews every third of it (one small commit), a writer that
   * commits more often renews with its commits.
   */
  leaseMs: 300_000,
} as const;
