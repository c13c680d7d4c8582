import { Observable } from 'rxjs';
import type { OperatorFunction } from 'rxjs';
import {
  DecodeError,
  EXCHANGE_TIME_ZONES,
  parseWallClock,
  suspensionInstant,
} from '@quoteflow/core/internal';
import type { SuspensionRecord } from '@quoteflow/core';

/** The kinds of change between two snapshots. */
export const SUSPENSION_CHANGE_KINDS = ['new', 'changed', 'removed'] as const;
export type SuspensionChangeKind = (typeof SUSPENSION_CHANGE_KINDS)[number];

/** One change between two successive snapshots of a suspension endpoint. */
export interface SuspensionChange {
  readonly type: 'suspension-change';
  readonly change: SuspensionChangeKind;
  /** The record's identity, see {@link suspensionKey}. */
  readonly key: string;
  /** The record now (for `removed`: the record as last seen). */
  readonly record: SuspensionRecord;
  /** The record before (`changed` and `removed`), else `undefined`. */
  readonly previous: SuspensionRecord | undefined;
}

/** Options of {@link suspensionChanges} and {@link createSuspensionDiffer}. */
export interface SuspensionChangesOptions {
  /**
   * Records already known, e.g. from the dataset after a restart; the first snapshot then emits
   * only what differs from them.
   */
  readonly initial?: readonly SuspensionRecord[];
  /** Whether the first snapshot (without `initial`) emits every record as `new`. @defaultValue true */
  readonly emitInitial?: boolean;
}

/** Defaults of {@link SuspensionChangesOptions}. */
export const SUSPENSION_CHANGES_DEFAULTS = { emitInitial: true } as const;

const RAW_FIELDS = [
  'symbolName',
  'haltReason',
  'haltDate',
  'haltTime',
  'haltPeriod',
  'haltDateTime',
  'resumeDate',
  'resumeTime',
  'resumeDateTime',
  'sourceExchange',
  'pauseThresholdPrice',
  'publishDate',
] as const satisfies readonly (keyof SuspensionRecord)[];

function clean(v: string | undefined): string | undefined {
  if (v === undefined || v === null) return undefined;
  const t = v.trim();
  return t === '' ? undefined : t;
}

function finiteOr(ms: number | undefined, fallback: () => number | undefined): number | undefined {
  return ms !== undefined && Number.isFinite(ms) ? ms : fallback();
}

/**
 * Normalises one record across the three exchanges: trims strings (empty → `undefined`), and fills
 * `haltAtMs`, `resumeAtMs` and `publishAtMs` from the raw wall-clock strings in the exchange's time
 * zone (core's `EXCHANGE_TIME_ZONES`) where they are missing or not finite: `haltDateTime`, else
 * `haltDate` + `haltTime` (likewise for resume). Raw strings are kept. Records decoded by core
 * already satisfy this; records from elsewhere may not. Throws core's `DecodeError`
 * (`QF_DECODE`) for an unknown exchange or an empty symbol.
 */
export function normalizeSuspension(record: SuspensionRecord): SuspensionRecord {
  const tz = EXCHANGE_TIME_ZONES[record.exchange] as string | undefined;
  if (tz === undefined || !Object.hasOwn(EXCHANGE_TIME_ZONES, record.exchange)) {
    throw new DecodeError(
      'suspension',
      'exchange',
      `unknown exchange ${JSON.stringify(record.exchange)}; expected sse, nyse or nasdaq`,
    );
  }
  if (typeof record.symbol !== 'string' || record.symbol.trim() === '') {
    throw new DecodeError(
      'suspension',
      'symbol',
      `a record needs a non-empty symbol, got ${JSON.stringify(record.symbol)}`,
    );
  }
  const raw = {} as Record<(typeof RAW_FIELDS)[number], string | undefined>;
  for (const f of RAW_FIELDS) raw[f] = clean(record[f]);
  const publishDate = raw.publishDate ?? '';
  return {
    type: 'suspension',
    exchange: record.exchange,
    symbol: record.symbol.trim(),
    ...raw,
    publishDate,
    haltAtMs: finiteOr(record.haltAtMs, () =>
      suspensionInstant(raw.haltDateTime, raw.haltDate, raw.haltTime, tz),
    ),
    resumeAtMs: finiteOr(record.resumeAtMs, () =>
      suspensionInstant(raw.resumeDateTime, raw.resumeDate, raw.resumeTime, tz),
    ),
    publishAtMs: finiteOr(record.publishAtMs, () => parseWallClock(publishDate, tz)) ?? Number.NaN,
  };
}

/**
 * The identity of a suspension record: `exchange|symbol|halt`, where `halt` is the halt instant
 * (epoch ms), else the raw `haltDate`, else `publish:<publishDate>` for a record without halt
 * information. A later snapshot that changes the resume time, reason or announcement of the same
 * halt is thus a `changed` record, not a new one. Two records of one snapshot with the same key
 * are told apart by their `publishDate`, then by order (`#2`, `#3`, …).
 */
export function suspensionKey(record: SuspensionRecord): string {
  const halt =
    record.haltAtMs !== undefined && Number.isFinite(record.haltAtMs)
      ? String(record.haltAtMs)
      : record.haltDate !== undefined
        ? `date:${record.haltDate}`
        : `publish:${record.publishDate}`;
  return `${record.exchange}|${record.symbol}|${halt}`;
}

function sameRecord(a: SuspensionRecord, b: SuspensionRecord): boolean {
  for (const f of RAW_FIELDS) if (a[f] !== b[f]) return false;
  return (
    a.haltAtMs === b.haltAtMs &&
    a.resumeAtMs === b.resumeAtMs &&
    a.publishAtMs === b.publishAtMs &&
    a.symbol === b.symbol
  );
}

/** The plain state machine behind {@link suspensionChanges}. */
export interface SuspensionDiffer {
  /** The changes from the previous snapshot to `snapshot`; then `snapshot` becomes the previous one. */
  diff(snapshot: readonly SuspensionRecord[]): SuspensionChange[];
}

function keyed(snapshot: readonly SuspensionRecord[]): Map<string, SuspensionRecord> {
  const out = new Map<string, SuspensionRecord>();
  // Oldest announcement first (the endpoints send latest first), so keys and output are stable.
  const records = snapshot
    .map(normalizeSuspension)
    .sort((a, b) => (a.publishAtMs || 0) - (b.publishAtMs || 0));
  for (const r of records) {
    const base = suspensionKey(r);
    let key = base;
    const existing = out.get(key);
    if (existing !== undefined) {
      if (sameRecord(existing, r)) continue; // an exact repeat
      key = `${base}|${r.publishDate}`;
      for (let n = 2; out.has(key); n++) key = `${base}|${r.publishDate}#${n}`;
    }
    out.set(key, r);
  }
  return out;
}

/**
 * Creates the state machine behind {@link suspensionChanges}, for use without RxJS.
 *
 * @example
 * ```ts
 * const differ = createSuspensionDiffer();
 * for (const c of differ.diff(await fetchSse())) console.log(c.change, c.record.symbol);
 * ```
 */
export function createSuspensionDiffer(options: SuspensionChangesOptions = {}): SuspensionDiffer {
  const known = options.initial === undefined ? new Map<string, SuspensionRecord>() : keyed(options.initial);
  let silent =
    options.initial === undefined && !(options.emitInitial ?? SUSPENSION_CHANGES_DEFAULTS.emitInitial);
  return {
    diff(snapshot) {
      const next = keyed(snapshot);
      const changes: SuspensionChange[] = [];
      for (const [key, record] of next) {
        const previous = known.get(key);
        if (previous === undefined)
          changes.push({ type: 'suspension-change', change: 'new', key, record, previous: undefined });
        else if (!sameRecord(previous, record))
          changes.push({ type: 'suspension-change', change: 'changed', key, record, previous });
      }
      // Removal is scoped to the exchanges this snapshot covers: one exchange's snapshot says
      // nothing about another's, and an empty snapshot (no exchange) removes nothing.
      const exchanges = new Set<string>();
      for (const r of next.values()) exchanges.add(r.exchange);
      for (const [key, previous] of known) {
        if (exchanges.has(previous.exchange) && !next.has(key)) {
          changes.push({ type: 'suspension-change', change: 'removed', key, record: previous, previous });
          known.delete(key);
        }
      }
      for (const [key, record] of next) known.set(key, record);
      if (silent) {
        silent = false;
        return [];
      }
      return changes;
    },
  };
}

/**
 * From successive full snapshots of the suspension endpoints (one array per poll, one or several
 * exchanges), emits only new, changed and removed records, normalised across the three exchanges
 * (see {@link normalizeSuspension}: exchange, symbol, halt and resume instants in UTC from the
 * exchange-local wall-clock strings, raw strings kept) and keyed by {@link suspensionKey}.
 *
 * Per snapshot: `new` and `changed` in announcement order (oldest first), then `removed`. A record
 * is removed only when a snapshot of its exchange no longer holds it (the service returns the
 * last year, so old records age out); an empty snapshot removes nothing. Forwards error and
 * completion; state is per subscription.
 *
 * @param options - `initial` records (after a restart) and `emitInitial`.
 * @example
 * ```ts
 * timer(0, 60_000).pipe(switchMap(() => client.suspensions('nyse')), suspensionChanges())
 *   .subscribe((c) => console.log(c.change, c.record.symbol, c.record.haltAtMs));
 * ```
 */
export function suspensionChanges(
  options: SuspensionChangesOptions = {},
): OperatorFunction<readonly SuspensionRecord[], SuspensionChange> {
  return (source) =>
    new Observable<SuspensionChange>((subscriber) => {
      const differ = createSuspensionDiffer(options);
      return source.subscribe({
        next: (snapshot) => {
          let changes: SuspensionChange[];
          try {
            changes = differ.diff(snapshot);
          } catch (err) {
            subscriber.error(err);
            return;
          }
          for (const c of changes) subscriber.next(c);
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
    });
}
