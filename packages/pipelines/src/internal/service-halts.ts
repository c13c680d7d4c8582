import {
  EXCHANGES,
  type Clock,
  type Exchange,
  type KlineType,
  type QuoteflowClient,
  type ExchangeId,
} from '@quoteflow/core';
import {
  EXCHANGE_CALENDARS,
  marketOfExchange,
  mayTradeAt,
  POLL_SUSPENSIONS_DEFAULTS,
  stockMarketOf,
} from '@quoteflow/core/internal';
import { haltExplainsGap, type Halt } from '@quoteflow/operators/internal';
import type { DatasetHalt } from '../read-halts.js';
import { haltOf, uniqueHalts } from './halt-of.js';

/** How long a sync's start waits for the service's first answer about halts (ms). */
export const START_WAIT_MS = 10_000;

/** The most of the token's daily budget the rounds may spend (they count in it like any request). */
export const HALTS_BUDGET_SHARE = 0.01;

/**
 * Time between rounds of `exchanges` queries: a minute at least (the token's one suspension query
 * a minute), and long enough that a day of rounds spends at most {@link HALTS_BUDGET_SHARE} of a
 * daily budget of `perDay` requests (the two US exchanges: every 4.8 hours on Free's 1,000 a day,
 * every 3 minutes 20 s on Basic's 86,400, every minute from Premium's 864,000 up).
 */
export function roundIntervalMs(perDay: number, exchanges: number): number {
  return Math.max(
    POLL_SUSPENSIONS_DEFAULTS.minIntervalMs,
    Math.ceil((86_400_000 * exchanges) / (perDay * HALTS_BUDGET_SHARE)),
  );
}

/** The calendar of each suspension endpoint's market. */
const CALENDAR_OF: Readonly<Record<Exchange, ExchangeId>> = { sse: 'XSHG', nyse: 'XNYS', nasdaq: 'XNAS' };

/**
 * The suspension endpoints that can report a halt of one of `codes`: Shanghai codes on `sse`; a US
 * code on `nyse` or `nasdaq`, since the code does not say which it trades on. None for the rest.
 */
export function suspensionExchangesOf(codes: Iterable<string>): Exchange[] {
  const markets = new Set([...codes].map(stockMarketOf));
  return EXCHANGES.filter((e) => markets.has(marketOfExchange(e)));
}

/** Options of {@link ServiceHalts}. */
export interface ServiceHaltsOptions {
  readonly client: QuoteflowClient;
  readonly clock: Clock;
  readonly signal: AbortSignal;
  /** The sync's codes, changed in place by `add` and `remove`: each round asks for those of then. */
  readonly universe: readonly string[];
  /** A failed query is a `warning`, once per exchange until a query of it succeeds again. */
  readonly emitEvent: (e: { type: 'warning'; message: string; error: unknown }) => void;
  /** Only `true` asks; otherwise only the halts given to `explain` count. @defaultValue false */
  readonly on: boolean | undefined;
}

/**
 * The halts the service's suspension endpoints report for a sync's universe, asked in rounds: one
 * at `start()`, then one {@link roundIntervalMs} after the previous round ended (a minute on most
 * plans), on the clock. Every query goes
 * through the client, whose scheduler keeps the token's one suspension query a minute over all
 * exchanges (spec: Limits; provider-facts.md reads it per token), so a round of two exchanges takes
 * a minute and each exchange is asked at most once a minute; after the first round, only while its
 * market may trade. A failed query keeps what that exchange reported before.
 */
export class ServiceHalts {
  readonly #o: ServiceHaltsOptions;
  readonly #byExchange = new Map<Exchange, readonly DatasetHalt[]>();
  readonly #warned = new Set<Exchange>();
  // The sync can end without its signal aborting (a backfill-only run): its query must end too.
  readonly #abort = new AbortController();
  readonly #signal: AbortSignal;
  #timer: unknown;
  #halts: readonly DatasetHalt[] = [];

  constructor(options: ServiceHaltsOptions) {
    this.#o = options;
    this.#signal = AbortSignal.any([options.signal, this.#abort.signal]);
  }

  /**
   * Whether one of `others` (the dataset's) or of the halts the service reported (each exchange's
   * latest answer) explains the hole: operators' `haltExplainsGap`.
   */
  explain(
    others: readonly Halt[],
    code: string,
    klineType: KlineType,
    afterMs: number,
    beforeMs: number,
  ): boolean {
    const all = this.#halts.length === 0 ? others : [...others, ...this.#halts];
    return all.length > 0 && haltExplainsGap(all, code, klineType, afterMs, beforeMs);
  }

  /**
   * Starts the rounds; resolves once the first query of the first round is answered (or failed),
   * at once when no code is on a covered exchange, and after {@link START_WAIT_MS} at most: another
   * process of the token may hold its one suspension query a minute, and a sync is not held that
   * long for a halt (a hole judged before the answer is read again, then reported). The rest of
   * that round arrives as the token's minute allows.
   */
  start(): Promise<void> {
    if (this.#o.on !== true) return Promise.resolve();
    return new Promise<void>((firstAnswered) => {
      const wait = this.#o.clock.setTimeout(firstAnswered, START_WAIT_MS);
      const answered = () => {
        this.#o.clock.clearTimeout(wait);
        firstAnswered();
      };
      void this.#round(answered).finally(answered);
    });
  }

  /** No more rounds, and the query in flight is abandoned. */
  stop(): void {
    this.#abort.abort();
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
  }

  async #round(onAnswer: () => void, first = true): Promise<void> {
    for (const exchange of suspensionExchangesOf(this.#o.universe)) {
      if (this.#signal.aborted) return;
      // After the first round, an exchange whose market cannot trade halts nothing new worth a
      // year of records (Shanghai's evening notices are read as its market opens): no query.
      if (!first && !mayTradeAt(EXCHANGE_CALENDARS[CALENDAR_OF[exchange]], this.#o.clock.now())) continue;
      await this.#ask(exchange);
      onAnswer();
    }
    if (this.#signal.aborted) return;
    this.#timer = this.#o.clock.setTimeout(
      () => void this.#round(() => undefined, false),
      roundIntervalMs(this.#o.client.limits.perDay, suspensionExchangesOf(this.#o.universe).length),
    );
  }

  async #ask(exchange: Exchange): Promise<void> {
    try {
      const records = await this.#o.client.suspensions(exchange, {
        signal: this.#signal,
        sourceId: `kline-sync-halts-${exchange}`,
      });
      const halts = records.map((r) => haltOf(exchange, r.symbol, r.haltAtMs, r.resumeAtMs));
      this.#byExchange.set(
        exchange,
        halts.filter((h) => h !== undefined),
      );
      this.#halts = uniqueHalts([...this.#byExchange.values()].flat());
      this.#warned.delete(exchange);
    } catch (err) {
      if (this.#signal.aborted || this.#warned.has(exchange)) return;
      this.#warned.add(exchange);
      this.#o.emitEvent({
        type: 'warning',
        message: `suspension query of ${exchange} failed; its halts known so far are kept and it is asked again in a minute`,
        error: err,
      });
    }
  }
}
