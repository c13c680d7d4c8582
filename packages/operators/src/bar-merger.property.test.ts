import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Bar, BarUpdate, GapMarker, KlineType } from '@quoteflow/core';
import { createBarMerger } from './bar-merger.js';
import type { MergeBarsOutput } from './bar-merger-types.js';
import type { BarReport } from './normalize-bars.js';

// A model of the provider, written without core's calendars: each bar knows its label, the period
// its values really cover and its true end; the service answers a request processed at service
// time t with the bars labelled at or before t, each bar's values read at min(t, true end). The
// service's clock may run up to the grace ahead of or behind ours. The merger's finals are checked
// against the values at the true end, its waiting against the evidence it was given, and its
// forming updates against what it still owes: none goes out while an older bar seen is not final
// or a reported gap before it is open, and once everything is settled the newest values are out.

const MIN = 60_000;
const HOUR = 60 * MIN;

type Season = 'winter' | 'summer';
/** A Thursday, Friday and Monday of one week, and New York's offset behind UTC then (hours). */
const WEEKS: Readonly<
  Record<
    Season,
    { readonly days: readonly (readonly [number, number, number])[]; readonly behindUtcH: number }
  >
> = {
  winter: {
    days: [
      [2026, 11, 12],
      [2026, 11, 13],
      [2026, 11, 16],
    ],
    behindUtcH: 5,
  },
  summer: {
    days: [
      [2026, 7, 16],
      [2026, 7, 17],
      [2026, 7, 20],
    ],
    behindUtcH: 4,
  },
};
const THU = 0;
const FRI = 1;
const MON = 2;

/** Wall-clock time in New York on day `day` of the season's week, as epoch ms. */
function ny(season: Season, day: number, h: number, m = 0): number {
  const [y, mo, d] = WEEKS[season].days[day]!;
  return Date.UTC(y, mo - 1, d, h + WEEKS[season].behindUtcH, m);
}

const SERIES_KINDS = ['us-minutes', 'us-hours', 'us-days', 'crypto-minutes'] as const;
type SeriesKind = (typeof SERIES_KINDS)[number];
const HOUR_LABELS = ['clock-hour', 'open'] as const;
type HourLabels = (typeof HOUR_LABELS)[number];
const DAY_LABELS = ['midnight-utc', 'midnight-local', 'open'] as const;
type DayLabels = (typeof DAY_LABELS)[number];

interface ModelBar {
  readonly labelMs: number;
  /** The period the values really cover: [startMs, endMs). */
  readonly startMs: number;
  readonly endMs: number;
  /** The close of the session the bar belongs to (its end for a 24-hour market). */
  readonly sessionCloseMs: number;
}

interface ModelSeries {
  readonly code: string;
  readonly klineType: KlineType;
  /** Oldest first; the service has no bars before the first. */
  readonly bars: readonly ModelBar[];
  readonly byLabel: ReadonlyMap<number, ModelBar>;
  /** Whether `/kline` pages backwards from a timestamp (crypto), or only from now (stocks). */
  readonly canPageBack: boolean;
}

/** Every request of a run is sent before this; final answers are read at it (New York Monday 16:10). */
const finalReadMs = (season: Season) => ny(season, MON, 16, 10);

function modelSeries(kind: SeriesKind, season: Season, hours: HourLabels, days: DayLabels): ModelSeries {
  const bars: ModelBar[] = [];
  const t = (day: number, h: number, m = 0) => ny(season, day, h, m);
  if (kind === 'us-minutes') {
    // A listing that starts trading on Friday at 14:30: 90 bars on Friday, 390 on Monday.
    for (const [day, from] of [
      [FRI, t(FRI, 14, 30)],
      [MON, t(MON, 9, 30)],
    ] as const) {
      const close = t(day, 16);
      for (let s = from; s < close; s += MIN)
        bars.push({ labelMs: s, startMs: s, endMs: s + MIN, sessionCloseMs: close });
    }
  } else if (kind === 'us-hours') {
    for (const day of [THU, FRI, MON]) {
      const open = t(day, 9, 30);
      const close = t(day, 16);
      if (hours === 'clock-hour') {
        // The first bar is labelled 09:00 and covers 09:30-10:00.
        for (let h = 9; h <= 15; h++)
          bars.push({
            labelMs: t(day, h),
            startMs: Math.max(t(day, h), open),
            endMs: t(day, h + 1),
            sessionCloseMs: close,
          });
      } else {
        // Anchored at the open: the last bar covers 15:30-16:00.
        for (let s = open; s < close; s += HOUR)
          bars.push({ labelMs: s, startMs: s, endMs: Math.min(s + HOUR, close), sessionCloseMs: close });
      }
    }
  } else if (kind === 'us-days') {
    for (const day of [THU, FRI, MON]) {
      const [y, mo, d] = WEEKS[season].days[day]!;
      const open = t(day, 9, 30);
      const close = t(day, 16);
      const labelMs =
        days === 'midnight-utc' ? Date.UTC(y, mo - 1, d) : days === 'midnight-local' ? t(day, 0) : open;
      bars.push({ labelMs, startMs: open, endMs: close, sessionCloseMs: close });
    }
  } else {
    // 510 minutes from Monday 08:00 New York: the latest 500 at the final read reach the first.
    for (let s = t(MON, 8); s < t(MON, 16, 30); s += MIN)
      bars.push({ labelMs: s, startMs: s, endMs: s + MIN, sessionCloseMs: s + MIN });
  }
  const code = kind === 'crypto-minutes' ? 'BTCUSDT' : 'AAPL.US';
  const klineType: KlineType = kind === 'us-hours' ? 5 : kind === 'us-days' ? 8 : 1;
  return {
    code,
    klineType,
    bars,
    byLabel: new Map(bars.map((b) => [b.labelMs, b])),
    canPageBack: kind === 'crypto-minutes',
  };
}

const seriesCache = new Map<string, ModelSeries>();
function cachedSeries(kind: SeriesKind, season: Season, hours: HourLabels, days: DayLabels): ModelSeries {
  const key = `${kind}|${season}|${hours}|${days}`;
  let s = seriesCache.get(key);
  if (s === undefined) {
    s = modelSeries(kind, season, hours, days);
    seriesCache.set(key, s);
  }
  return s;
}

type Values = Pick<Bar, 'open' | 'high' | 'low' | 'close' | 'volume' | 'turnover'>;

/** The bar's values as the service computes them at service time `tMs`; final from its true end on. */
function valuesAt(bar: ModelBar, tMs: number): Values {
  const elapsedS = Math.max(0, Math.min(tMs, bar.endMs) - bar.startMs) / 1000;
  const open = 100 + ((bar.labelMs / MIN) % 89);
  const close = open + elapsedS / 8;
  return { open, high: close + 1, low: open - 1, close, volume: elapsedS, turnover: elapsedS * 3 };
}

/** Index after the newest bar labelled at or before `tMs`. */
function visibleCount(series: ModelSeries, tMs: number): number {
  let lo = 0;
  let hi = series.bars.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (series.bars[mid]!.labelMs <= tMs) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The newest `n` bars labelled at or before `min(processedMs, endMs)`. */
function newestBars(series: ModelSeries, processedMs: number, n: number, endMs = Infinity): ModelBar[] {
  const to = visibleCount(series, Math.min(processedMs, endMs));
  return series.bars.slice(Math.max(0, to - n), to);
}

function toRows(
  series: ModelSeries,
  bars: readonly ModelBar[],
  processedMs: number,
  readAtMs: number,
  receivedAtMs: number,
): Bar[] {
  return bars.map((b) => ({
    type: 'bar',
    code: series.code,
    klineType: series.klineType,
    tsMs: b.labelMs,
    ...valuesAt(b, processedMs),
    readAtMs,
    receivedAtMs,
  }));
}

// ---- generated runs ------------------------------------------------------------------------------

interface FocusSpec {
  readonly series: number;
  readonly bar: number;
  /** Around the bar's true end, its label (when it appears) or its session's close. */
  readonly at: 'end' | 'label' | 'close';
}

interface RequestSpec {
  readonly focus: number;
  readonly offsetMs: number;
  readonly latencyMs: number;
  /** Where in [sent, received] the service processed the request, in thousandths. */
  readonly processedPermille: number;
  /** `batch`: `/batch-kline`, latest 1 or 2 of each series; `history`: latest n; `page`: n ending at a timestamp (crypto only). */
  readonly kind: 'batch' | 'history' | 'page';
  readonly n: number;
  /** Where a `page` ends, relative to the focus instant (-1: the bar that ends there). */
  readonly pageEndOffsetMs: number;
  readonly seriesMask: number;
  readonly newestFirst: boolean;
  readonly repeatRows: boolean;
  /** Extra delay before the merger sees the answer: answers may reach it out of order. */
  readonly extraDelayMs: number;
  /** Pushed together with the answer delivered before it, as one batch. */
  readonly joinWithPrevious: boolean;
}

interface Scenario {
  readonly season: Season;
  readonly kinds: readonly SeriesKind[];
  readonly hours: HourLabels;
  readonly days: DayLabels;
  readonly graceMs: number;
  /** The service's clock minus ours, as a share of the grace (-1 to 1). */
  readonly skewShare: number;
  readonly focuses: readonly FocusSpec[];
  readonly requests: readonly RequestSpec[];
  /** Bars per group in `/batch-kline` answers: 1 (as in the provider's own sample), 2, or either. */
  readonly batchSize: 1 | 2 | 'mixed';
  readonly finalLatest: number;
}

const focusArb: fc.Arbitrary<FocusSpec> = fc.record({
  series: fc.nat(1),
  bar: fc.nat(600),
  at: fc.constantFrom('end', 'end', 'label', 'close'),
});

const requestArb: fc.Arbitrary<RequestSpec> = fc.record({
  focus: fc.nat(3),
  offsetMs: fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: -6_000, max: 9_000 }) },
    { weight: 1, arbitrary: fc.integer({ min: -180_000, max: 180_000 }) },
  ),
  latencyMs: fc.integer({ min: 0, max: 3_000 }),
  processedPermille: fc.integer({ min: 0, max: 1_000 }),
  kind: fc.constantFrom('batch', 'batch', 'batch', 'history', 'page', 'page'),
  n: fc.oneof(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 500 })),
  pageEndOffsetMs: fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(-1, 0, -MIN - 1) },
    { weight: 1, arbitrary: fc.integer({ min: -300_000, max: 60_000 }) },
  ),
  seriesMask: fc.integer({ min: 1, max: 3 }),
  newestFirst: fc.boolean(),
  repeatRows: fc.integer({ min: 0, max: 9 }).map((x) => x === 0),
  extraDelayMs: fc.oneof(
    { weight: 4, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 15_000 }) },
  ),
  joinWithPrevious: fc.integer({ min: 0, max: 7 }).map((x) => x === 0),
});

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  season: fc.constantFrom<Season>('winter', 'summer'),
  kinds: fc.uniqueArray(fc.constantFrom(...SERIES_KINDS), { minLength: 1, maxLength: 2 }),
  hours: fc.constantFrom(...HOUR_LABELS),
  days: fc.constantFrom(...DAY_LABELS),
  graceMs: fc.constantFrom(0, 2_000, 5_000),
  skewShare: fc.oneof(fc.constant(0), fc.double({ min: -1, max: 1, noNaN: true })),
  focuses: fc.array(focusArb, { minLength: 1, maxLength: 4 }),
  requests: fc.array(requestArb, { minLength: 1, maxLength: 40, size: 'medium' }),
  batchSize: fc.constantFrom<1 | 2 | 'mixed'>(1, 2, 'mixed'),
  finalLatest: fc.integer({ min: 1, max: 2 }),
});

/**
 * Runs where bars are mostly proven by a read sent after an answer with a newer bar arrived: a
 * 24-hour series, latest-1 batches and pages that end with the bar closing at the focus, read
 * within the grace after the newer bar appears (so the calendar does not prove them first).
 */
const laterArrivalArb: fc.Arbitrary<Scenario> = scenarioArb.map((sc) => ({
  ...sc,
  kinds: ['crypto-minutes'],
  graceMs: 5_000,
  batchSize: 1,
  focuses: sc.focuses.map((f) => ({ ...f, at: 'end' as const })),
  requests: sc.requests.map((r) => ({
    ...r,
    kind: r.kind === 'history' ? ('batch' as const) : r.kind,
    offsetMs: Math.abs(r.offsetMs) % 5_000,
    pageEndOffsetMs: -1,
  })),
}));

interface Answer {
  readonly rows: Bar[];
  readonly receivedAtMs: number;
  readonly deliverAtMs: number;
  readonly joinWithPrevious: boolean;
}

/** Turns the request specs into answers of the model service, in the order the merger sees them. */
function answersOf(sc: Scenario, series: readonly ModelSeries[]): Answer[] {
  const lastSendMs = finalReadMs(sc.season) - 10_000;
  const skewMs = Math.trunc(sc.skewShare * sc.graceMs);
  const drafts = sc.requests.map((req, index) => {
    const focus = sc.focuses[req.focus % sc.focuses.length]!;
    const target = series[focus.series % series.length]!;
    const bar = target.bars[focus.bar % target.bars.length]!;
    const focusMs = focus.at === 'end' ? bar.endMs : focus.at === 'label' ? bar.labelMs : bar.sessionCloseMs;
    const sentMs = Math.min(focusMs + req.offsetMs, lastSendMs);
    const arrivesMs = sentMs + req.latencyMs;
    // On the service's clock.
    const processedMs = sentMs + Math.floor((req.latencyMs * req.processedPermille) / 1000) + skewMs;
    return { req, index, target, focusMs, sentMs, arrivesMs, processedMs };
  });
  // The client stamps each answer's arrival uniquely: max(now, previous + 1).
  const byArrival = [...drafts].sort((a, b) => a.arrivesMs - b.arrivesMs || a.index - b.index);
  let previous = -Infinity;
  const answers: (Answer & { index: number })[] = [];
  for (const d of byArrival) {
    const receivedAtMs = Math.max(d.arrivesMs, previous + 1);
    previous = receivedAtMs;
    const { req } = d;
    let targets = series.filter((_, i) => (req.seriesMask >> i) & 1);
    if (targets.length === 0 || req.kind !== 'batch') targets = [targets[0] ?? d.target];
    const rows = targets.flatMap((s) => {
      const bars =
        req.kind === 'batch'
          ? newestBars(s, d.processedMs, sc.batchSize === 'mixed' ? 1 + (req.n % 2) : sc.batchSize)
          : req.kind === 'page' && s.canPageBack
            ? newestBars(s, d.processedMs, req.n, d.focusMs + req.pageEndOffsetMs)
            : newestBars(s, d.processedMs, req.n);
      return toRows(s, bars, d.processedMs, d.sentMs, receivedAtMs);
    });
    if (req.newestFirst) rows.reverse();
    // A known upstream defect: the bars of an answer repeated.
    if (req.repeatRows) rows.push(...rows);
    answers.push({
      rows,
      receivedAtMs,
      deliverAtMs: receivedAtMs + req.extraDelayMs,
      joinWithPrevious: req.joinWithPrevious,
      index: d.index,
    });
  }
  return answers.sort((a, b) => a.deliverAtMs - b.deliverAtMs || a.receivedAtMs - b.receivedAtMs);
}

const keyOf = (code: string, klineType: number, tsMs: number) => `${code}|${klineType}|${tsMs}`;
const seriesKeyOf = (code: string, klineType: number | undefined) => `${code}|${klineType}`;

interface Marker extends GapMarker {
  readonly pushIndex: number;
}

interface Read {
  readonly readAtMs: number;
  /** Whether the answer held a newer bar of the series. */
  readonly withNewer: boolean;
  readonly close: number;
}

/** What the merger was told about one series: every read of each label, and each label's first arrival. */
interface Evidence {
  readonly reads: Map<number, Read[]>;
  readonly firstArrivalMs: Map<number, number>;
}

/** Feeds a merger and checks every output against the model and the evidence it was given. */
class Run {
  readonly merger;
  readonly finals = new Map<string, BarUpdate>();
  readonly markers: Marker[] = [];
  readonly reports: BarReport[] = [];
  /** Per bar key: the newest final of its series when the merger first saw the bar. */
  readonly firstSeen = new Map<string, number>();
  /** Per series: the labels of each answer pushed, with the push that carried it. */
  private readonly answersSeen = new Map<string, { pushIndex: number; labels: number[] }[]>();
  private readonly evidence = new Map<string, Evidence>();
  private readonly nextRevision = new Map<string, number>();
  private readonly askedAgain = new Set<string>();
  private readonly newestFinal = new Map<string, number>();
  /** Per series: the newest forming update emitted. */
  private readonly lastForming = new Map<string, BarUpdate>();
  private pushIndex = 0;

  constructor(
    readonly series: readonly ModelSeries[],
    private readonly graceMs: number,
  ) {
    this.merger = createBarMerger({ graceMs, onReport: (r) => this.reports.push(r) });
  }

  modelOf(code: string, klineType: number | undefined): ModelSeries {
    const s = this.series.find((x) => x.code === code && x.klineType === klineType);
    if (s === undefined) throw new Error(`output for a series not in the model: ${code} ${klineType}`);
    return s;
  }

  isFinal(code: string, klineType: number, tsMs: number): boolean {
    return this.finals.has(keyOf(code, klineType, tsMs));
  }

  push(rows: Bar[]): void {
    const index = ++this.pushIndex;
    const answers = new Map<string, Bar[]>();
    for (const r of rows) {
      const key = keyOf(r.code, r.klineType, r.tsMs);
      const sk = seriesKeyOf(r.code, r.klineType);
      if (!this.firstSeen.has(key)) this.firstSeen.set(key, this.newestFinal.get(sk) ?? -Infinity);
      const ak = `${sk}|${r.readAtMs}|${r.receivedAtMs}`;
      answers.set(ak, [...(answers.get(ak) ?? []), r]);
    }
    for (const answer of answers.values()) {
      const { code, klineType, receivedAtMs } = answer[0]!;
      const sk = seriesKeyOf(code, klineType);
      const labels = answer.map((r) => r.tsMs);
      this.answersSeen.set(sk, [...(this.answersSeen.get(sk) ?? []), { pushIndex: index, labels }]);
      let ev = this.evidence.get(sk);
      if (ev === undefined) {
        ev = { reads: new Map(), firstArrivalMs: new Map() };
        this.evidence.set(sk, ev);
      }
      const newest = Math.max(...labels);
      for (const r of answer) {
        ev.reads.set(r.tsMs, [
          ...(ev.reads.get(r.tsMs) ?? []),
          { readAtMs: r.readAtMs, withNewer: r.tsMs < newest, close: r.close },
        ]);
        ev.firstArrivalMs.set(r.tsMs, Math.min(ev.firstArrivalMs.get(r.tsMs) ?? Infinity, receivedAtMs));
      }
    }
    this.merger.push(rows, (o) => this.check(o, index));
    for (const sk of this.evidence.keys()) this.checkNothingProvenWaits(sk);
  }

  /** Bars seen that are newer than the newest final of their series, oldest first. */
  private waiting(sk: string): number[] {
    const newestFinal = this.newestFinal.get(sk) ?? -Infinity;
    return [...(this.evidence.get(sk)?.reads.keys() ?? [])]
      .filter((l) => l > newestFinal)
      .sort((a, b) => a - b);
  }

  /**
   * Whether the merger holds evidence that the bar labelled `label` is final: a read of it in an
   * answer with a newer bar, a read sent after an answer with a newer bar arrived, or a read sent at
   * or after its session's close (the model's, not core's) plus the grace.
   */
  private proven(sk: string, label: number): boolean {
    const ev = this.evidence.get(sk)!;
    const [code, type] = sk.split('|');
    const closeMs = this.modelOf(code!, Number(type)).byLabel.get(label)!.sessionCloseMs;
    let newerArrivalMs = Infinity;
    for (const [l, t] of ev.firstArrivalMs) if (l > label && t < newerArrivalMs) newerArrivalMs = t;
    return (ev.reads.get(label) ?? []).some(
      (r) => r.withNewer || r.readAtMs > newerArrivalMs || r.readAtMs >= closeMs + this.graceMs,
    );
  }

  /** Nothing waits that the evidence proves and no reported gap holds back. */
  private checkNothingProvenWaits(sk: string): void {
    const head = this.waiting(sk)[0];
    if (head === undefined || head > this.gapAfter(sk)) return;
    expect(
      this.proven(sk, head),
      `${sk}|${head} (${new Date(head).toISOString()}) is proven but not final`,
    ).toBe(false);
  }

  private check(o: MergeBarsOutput, pushIndex: number): void {
    if (o.type === 'gap') {
      const model = this.modelOf(o.code, o.klineType);
      const sk = seriesKeyOf(o.code, o.klineType);
      if (o.reason === 'missing-bars') {
        // No false report: the model really has a bar between the two.
        const inside = model.bars.some((b) => b.labelMs > o.fromMs! && b.labelMs < o.toMs!);
        expect(inside, `missing-bars ${JSON.stringify(o)} with no bar between`).toBe(true);
      } else {
        expect(o.reason).toBe('unconfirmed');
        expect(model.byLabel.has(o.fromMs!)).toBe(true);
        expect(this.isFinal(o.code, o.klineType!, o.fromMs!)).toBe(false);
        // A re-read is asked for once, and only when the bar's values are not proven yet.
        expect(this.proven(sk, o.fromMs!), `unconfirmed marker for proven ${sk}|${o.fromMs}`).toBe(false);
        const key = keyOf(o.code, o.klineType!, o.fromMs!);
        expect(this.askedAgain.has(key), `second unconfirmed marker for ${key}`).toBe(false);
        this.askedAgain.add(key);
      }
      this.markers.push({ ...o, pushIndex });
      return;
    }
    const key = keyOf(o.code, o.klineType, o.tsMs);
    const sk = seriesKeyOf(o.code, o.klineType);
    const bar = this.modelOf(o.code, o.klineType).byLabel.get(o.tsMs);
    expect(bar, `emitted bar ${key} is not in the model`).toBeDefined();
    // (2) final at most once, and nothing after it; revisions count up from 0.
    expect(this.finals.has(key), `${key} emitted again after its final`).toBe(false);
    expect(o.revision).toBe(this.nextRevision.get(key) ?? 0);
    this.nextRevision.set(key, o.revision + 1);
    if (!o.final) {
      this.checkNothingOwedBefore(sk, o.tsMs);
      this.lastForming.set(sk, o);
      return;
    }
    // (1) the true final values, never a read from before the bar's true end.
    const { open, high, low, close, volume, turnover } = o;
    expect({ open, high, low, close, volume, turnover }, `final values of ${key}`).toEqual(
      valuesAt(bar!, bar!.endMs),
    );
    // (3) finals of a series ascend.
    expect(o.tsMs).toBeGreaterThan(this.newestFinal.get(sk) ?? -Infinity);
    this.newestFinal.set(sk, o.tsMs);
    this.finals.set(key, o);
  }

  /**
   * (5) A forming update of the bar labelled `tsMs` owes nothing older: every bar seen before it
   * (newer than the newest final) is final, and no reported gap before it is still open.
   */
  private checkNothingOwedBefore(sk: string, tsMs: number): void {
    const owed = this.waiting(sk).filter((l) => l < tsMs);
    const when = new Date(tsMs).toISOString();
    expect(owed, `${sk}: forming ${when} ahead of older bars not final`).toEqual([]);
    const gapAfter = this.gapAfter(sk);
    expect(gapAfter < tsMs, `${sk}: forming ${when} ahead of the open gap after ${gapAfter}`).toBe(false);
  }

  /**
   * (6) Once nothing is owed, each series' newest bar seen is out: final, or forming with the
   * values of its newest read.
   */
  checkNewestOut(): void {
    for (const [sk, ev] of this.evidence) {
      const newest = Math.max(...ev.reads.keys());
      const [code, type] = sk.split('|');
      if (this.isFinal(code!, Number(type), newest)) continue;
      const last = this.lastForming.get(sk);
      expect(last?.tsMs, `${sk}: newest bar ${new Date(newest).toISOString()} not out`).toBe(newest);
      const reads = ev.reads.get(newest)!;
      const newestReadMs = Math.max(...reads.map((r) => r.readAtMs));
      const closes = reads.filter((r) => r.readAtMs === newestReadMs).map((r) => r.close);
      expect(closes, `${sk}: newest forming values not its newest read's`).toContain(last!.close);
    }
  }

  /** Bars seen, not already behind a newer final when first seen, truly closed by `closedByMs`, and not final. */
  notFinal(closedByMs: number, mayWait: (sk: string, tsMs: number) => boolean): string[] {
    const out: string[] = [];
    for (const [key, newestFinalThen] of this.firstSeen) {
      const [code, type, ts] = key.split('|');
      const tsMs = Number(ts);
      const bar = this.modelOf(code!, Number(type)).byLabel.get(tsMs)!;
      if (tsMs <= newestFinalThen || bar.endMs > closedByMs || mayWait(`${code}|${type}`, tsMs)) continue;
      if (!this.finals.has(key)) out.push(`${key} (${new Date(tsMs).toISOString()})`);
    }
    return out;
  }

  /** Bars of reported gaps (missing-bars) that closed by `closedByMs` and are not final. */
  gapBarsNotFinal(closedByMs: number): string[] {
    const out: string[] = [];
    for (const m of this.markers) {
      if (m.reason !== 'missing-bars') continue;
      for (const b of this.modelOf(m.code, m.klineType).bars)
        if (
          b.labelMs > m.fromMs! &&
          b.labelMs < m.toMs! &&
          b.endMs <= closedByMs &&
          !this.isFinal(m.code, m.klineType!, b.labelMs)
        )
          out.push(keyOf(m.code, m.klineType!, b.labelMs));
    }
    return out;
  }

  /**
   * The older end of the oldest reported gap (missing-bars) that no single answer has covered since:
   * bars after it wait, since closing one would bar the missing bars before it for good.
   */
  gapAfter(sk: string): number {
    let after = Infinity;
    for (const m of this.markers) {
      if (m.reason !== 'missing-bars' || seriesKeyOf(m.code, m.klineType) !== sk) continue;
      const covered = (this.answersSeen.get(sk) ?? []).some(
        (a) =>
          a.pushIndex >= m.pushIndex &&
          a.labels.some((l) => l <= m.fromMs!) &&
          a.labels.some((l) => l >= m.toMs!),
      );
      if (!covered) after = Math.min(after, m.fromMs!);
    }
    return after;
  }

  /** Whether bar `tsMs` may still wait for a read: after an uncovered gap, or at or after an unconfirmed bar not yet final. */
  mayWait(sk: string, tsMs: number): boolean {
    if (tsMs > this.gapAfter(sk)) return true;
    return this.markers.some(
      (m) =>
        seriesKeyOf(m.code, m.klineType) === sk &&
        m.reason === 'unconfirmed' &&
        tsMs >= m.fromMs! &&
        !this.isFinal(m.code, m.klineType!, m.fromMs!),
    );
  }
}

function runScenario(sc: Scenario): void {
  const series = sc.kinds.map((k) => cachedSeries(k, sc.season, sc.hours, sc.days));
  const run = new Run(series, sc.graceMs);
  const answers = answersOf(sc, series);
  // Deliver, some answers joined into one batch.
  const batches: Bar[][] = [];
  for (const a of answers) {
    const rows = a.rows;
    const last = batches.at(-1);
    if (a.joinWithPrevious && last !== undefined) last.push(...rows);
    else batches.push([...rows]);
  }
  for (const rows of batches) run.push(rows);

  // The stream ends with one answer per series read after every session close plus the grace.
  const finalMs = finalReadMs(sc.season);
  const skewMs = Math.trunc(sc.skewShare * sc.graceMs);
  let receivedMs = Math.max(finalMs, ...answers.map((a) => a.receivedAtMs)) + 1;
  run.push(
    series.flatMap((s) =>
      toRows(s, newestBars(s, finalMs + skewMs, sc.finalLatest), finalMs + skewMs, finalMs, receivedMs),
    ),
  );

  // (4) Liveness: every bar seen and truly closed is final, but for bars behind a read still asked for.
  // Truly closed: by the service's clock when it answered the final read.
  const closedByMs = finalMs + skewMs;
  expect(
    run.notFinal(closedByMs, (sk, tsMs) => run.mayWait(sk, tsMs)),
    'closed bars left unproven',
  ).toEqual([]);

  // Answering every marker with a history answer leaves no closed bar unproven.
  let readMs = finalMs + 30_000;
  for (let i = 0; i < run.markers.length; i++) {
    expect(i, 're-reads do not settle').toBeLessThan(500);
    const m = run.markers[i]!;
    const s = run.modelOf(m.code, m.klineType);
    receivedMs = Math.max(receivedMs, readMs) + 1;
    run.push(toRows(s, newestBars(s, readMs + skewMs, 500), readMs + skewMs, readMs, receivedMs));
    readMs += 10;
  }
  expect(
    run.notFinal(closedByMs, () => false),
    'closed bars left unproven after re-reads',
  ).toEqual([]);
  expect(run.gapBarsNotFinal(closedByMs), 'bars of reported gaps never final').toEqual([]);
  run.checkNewestOut();
  expect(run.merger.pending().filter((p) => p.unconfirmed)).toEqual([]);
  expect(run.reports.filter((r) => r.problem !== 'late')).toEqual([]);
}

describe('createBarMerger against a model of the provider', () => {
  it('models New York at UTC-5 in November 2026 and UTC-4 in July 2026', () => {
    const offset = (ms: number) =>
      new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', timeZoneName: 'shortOffset' })
        .formatToParts(ms)
        .find((p) => p.type === 'timeZoneName')?.value;
    for (const season of ['winter', 'summer'] as const)
      for (const day of [THU, FRI, MON])
        expect(offset(ny(season, day, 12))).toBe(`GMT-${WEEKS[season].behindUtcH}`);
  });

  it('emits only true final values, each bar final once and in order, and every closed bar once it is read after its end', () => {
    fc.assert(fc.property(scenarioArb, runScenario), { numRuns: 250 });
  }, 120_000);

  it('proves bars by reads sent after an answer with a newer bar arrived, never by concurrent ones', () => {
    fc.assert(fc.property(laterArrivalArb, runScenario), { numRuns: 120 });
  }, 120_000);
});
