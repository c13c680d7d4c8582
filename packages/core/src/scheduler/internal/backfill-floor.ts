import type { EndpointKind } from '../../plans.js';

/** Slack for float sums of the share (0.1 added ten times is 0.9999999999999999). */
const EPSILON = 1e-9;

/**
 * The share of starts reserved for backfill while it has work waiting, kept for two budgets: all
 * starts (the combined rules every endpoint shares) and each endpoint's starts (its own rules).
 * Each is a deficit counter in starts (deficit round robin between live and backfill, live
 * preferred): a live start made while backfill waits for the budget adds `share` to backfill's
 * credit there; a start owed to backfill adds `share` and takes one away. Once the next start
 * would complete a whole owed start, backfill is due and its next start goes first. So while
 * backfill waits, at least one start in every `ceil(1 / share)` (1 in 5 at 0.2) is backfill, of
 * all starts and of the starts of each endpoint it waits for, as soon as a backfill job can
 * start; live work pays at most that share of its rate for it. The endpoint budget matters where
 * an endpoint opens only now and then (`/batch-kline` every few seconds): a live poller there
 * would otherwise take every opening while backfill got its combined share on other endpoints.
 *
 * A credit never exceeds one start and is dropped when no backfill waits for its budget, so
 * backfill cannot bank credit while idle or blocked and leave in a burst later. Starts backfill
 * makes on its own (no live job could use them) are extras: they change no credit. A start owed
 * to one endpoint's budget leaves the combined credit alone, so it never delays the combined
 * share owed to backfill sources of other endpoints. The combined share is not taken on an
 * endpoint where backfill is already ahead of its share while live work waits for it, so an
 * endpoint that opens only now and then is shared 1 in `N` there too, not given to backfill.
 */
export class BackfillFloor {
  private combined = 0;
  private readonly perEndpoint = new Map<EndpointKind, number>();

  /** @param share - the reserved fraction of starts, above 0 and at most 1. */
  constructor(readonly share: number) {}

  /**
   * Whether backfill is owed the next start of any endpoint (the combined budget); `liveAhead`
   * live starts are already decided (handed out, not made yet) and count as made.
   */
  dueOnAll(liveAhead = 0): boolean {
    return this.owes(this.combined + liveAhead * this.share);
  }

  /**
   * Whether a start owed to backfill may go to `endpoint`: its own share there is due, or the
   * combined share is due and backfill is not ahead of its share of this endpoint while live work
   * waits for it (`liveWaits`). `liveAhead` counts the live starts already decided (handed out,
   * not made yet), `all` of them and those `onEndpoint`.
   */
  dueFor(endpoint: EndpointKind, liveWaits = false, liveAhead = { all: 0, onEndpoint: 0 }): boolean {
    const credit = (this.perEndpoint.get(endpoint) ?? 0) + liveAhead.onEndpoint * this.share;
    if (this.owes(credit)) return true;
    return this.dueOnAll(liveAhead.all) && (!liveWaits || credit >= -EPSILON);
  }

  /**
   * Counts a live start of `endpoint`, made while backfill had work waiting (`waiting.any`) and
   * work waiting for this endpoint (`waiting.onEndpoint`).
   */
  liveStarted(
    endpoint: EndpointKind,
    waiting: { readonly any: boolean; readonly onEndpoint: boolean },
  ): void {
    this.combined = waiting.any ? Math.min(1, this.combined + this.share) : 0;
    const credit = this.perEndpoint.get(endpoint) ?? 0;
    this.perEndpoint.set(endpoint, waiting.onEndpoint ? Math.min(1, credit + this.share) : 0);
  }

  /**
   * Counts a backfill start of `endpoint` that was owed: it pays the combined credit if that was
   * due, and the endpoint's. When live work waited for the endpoint (`liveWaits`), the endpoint's
   * may go below zero: backfill took the combined share there and is ahead of its share of the
   * endpoint, by at most one start.
   */
  owedStarted(endpoint: EndpointKind, liveWaits: boolean): void {
    if (this.dueOnAll()) this.combined = Math.max(0, this.pay(this.combined));
    const credit = this.pay(this.perEndpoint.get(endpoint) ?? 0);
    this.perEndpoint.set(endpoint, Math.max(liveWaits ? this.share - 1 : 0, credit));
  }

  private owes(credit: number): boolean {
    return credit + this.share >= 1 - EPSILON;
  }

  /** The credit after one owed start: its own share in, one start out. */
  private pay(credit: number): number {
    return credit + this.share - 1;
  }
}
