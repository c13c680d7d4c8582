/** What `QuoteflowClient` is given (its options, a call's options) and what it reports (a request's record). */
import type { Dispatcher } from 'undici';
import type { Clock } from './clock.js';
import type { Family, ProductClass } from './markets.js';
import type { EndpointKind, Plan, PlanLimitOverrides } from './plans.js';
import type { Priority, RequestScheduler } from './request-scheduler.js';

/** A structured logger; every method optional. The library logs nothing unless given one. */
export interface QuoteflowLogger {
  debug?(event: string, fields: Readonly<Record<string, unknown>>): void;
  warn?(event: string, fields: Readonly<Record<string, unknown>>): void;
}

/**
 * Per-request timeouts, from the moment the scheduler lets the request leave. Real time, never
 * the injected clock: they guard a socket, not market time.
 */
export interface TimeoutOptions {
  /** `/static_info`, `/depth-tick`, `/kline`, `/batch-kline`: no headers, or a stalled body, for this long. @defaultValue 10 000 ms */
  readonly requestMs?: number;
  /** Suspension queries return a year of data: the spec advises a longer timeout. @defaultValue 60 000 ms */
  readonly suspensionMs?: number;
}

/** Retry policy: exponential backoff with full jitter, waited on the client's clock. */
export interface RetryOptions {
  /**
   * Requests per call, including the first (network errors, timeouts, 5xx, malformed bodies, 429).
   * @defaultValue 4, or unlimited with a finite `budgetMs`
   */
  readonly maxAttempts?: number;
  /**
   * How long a call may go on retrying a transient failure, ms of the client's clock from its first
   * attempt (core's `retryWithBudget`): for long batch work, a time budget rather than a count of
   * attempts (with it, `maxAttempts` is unlimited unless given). Suspension calls keep
   * `suspensionMaxAttempts`.
   * @defaultValue Infinity (`maxAttempts` alone bounds the retries)
   */
  readonly budgetMs?: number;
  /**
   * Requests per suspension call: every retry would wait for the token's once-a-minute slot, so a
   * failed query is reported at once (a watch asks again at its next poll). @defaultValue 1
   */
  readonly suspensionMaxAttempts?: number;
  /** Ceiling of the first backoff delay; doubles per attempt. @defaultValue 250 ms */
  readonly baseDelayMs?: number;
  /** Largest backoff ceiling. @defaultValue 15 000 ms */
  readonly maxDelayMs?: number;
  /** Extra requests for codes or groups the service left out of a response, before `QF_MISSING_ITEMS`. @defaultValue 2 */
  readonly missingRetries?: number;
  /** Random source in [0, 1) for the jitter (tests inject one). */
  readonly random?: () => number;
}

/** Options of {@link QuoteflowClient}. */
export interface QuoteflowClientOptions {
  /** The service's base address, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string;
  /** The subscription token; it never appears in an error, log line or thrown URL. */
  readonly token: string;
  /** The token's plan: decides the limits and the request sizes. */
  readonly plan: Plan;
  /** Stricter request sizes than the plan's (e.g. Free with 5 batch groups). */
  readonly limitOverrides?: PlanLimitOverrides;
  /**
   * The request scheduler; default: the process-wide one of this token and `clock`
   * (`sharedSchedulerFor`). An injected scheduler keeps its own clock: give it the same one.
   */
  readonly scheduler?: RequestScheduler;
  /**
   * The time of everything the client does but network timeouts: the scheduler it builds, retry
   * backoff, and the `readAtMs`/`receivedAtMs` stamps on every bar. Give every quoteflow part
   * of a process the same clock. @defaultValue {@link systemClock}
   */
  readonly clock?: Clock;
  /** undici dispatcher; default: a keep-alive `Agent` owned (and closed) by the client. */
  readonly dispatcher?: Dispatcher;
  readonly timeouts?: TimeoutOptions;
  readonly retry?: RetryOptions;
  readonly logger?: QuoteflowLogger;
  /**
   * Called once per attempt that left for the service (answered, refused or failed), with when it
   * was asked for, sent and settled: a request log or latency metrics. A throw is ignored.
   */
  readonly onRequest?: (record: RequestRecord) => void;
  /** Product class per code where `classifyCode` guesses wrong (decides whether `/kline` can page back). */
  readonly productClasses?: Readonly<Record<string, ProductClass>>;
  /** Endpoint family per code where the market suffix does not decide it. */
  readonly families?: Readonly<Record<string, Family>>;
}

/** One attempt of a request that was sent, as {@link QuoteflowClientOptions.onRequest} sees it. */
export interface RequestRecord {
  readonly endpoint: EndpointKind;
  /** 1 for the first attempt of a call, +1 for each retry. */
  readonly attempt: number;
  /** When the client asked the scheduler for it (epoch ms, the client's clock). */
  readonly queuedAtMs: number;
  /** When the scheduler let it go and it was sent (the bars' `readAtMs`). */
  readonly sentAtMs: number;
  /** When its answer was read or it failed. */
  readonly settledAtMs: number;
  /** `ok`, or the error's code (`QF_RATE_LIMITED`, `QF_NETWORK`, …). */
  readonly outcome: string;
}

/** Options of one call. */
export interface CallOptions {
  /** Aborting rejects the call with `QF_ABORTED` and aborts the request in flight. */
  readonly signal?: AbortSignal;
  /** Scheduler priority. @defaultValue 'live' */
  readonly priority?: Priority;
  /** Which source asked, so the scheduler shares fairly between sources. */
  readonly sourceId?: string;
  /** Endpoint family override for every code of this call (default: from each code's suffix). */
  readonly family?: Family;
}
