/**
 * Which instant a stock K-line's `timestamp` names. The provider's pages do not settle it
 * (provider-facts.md, "What the provider's pages do not settle"), so the simulator serves every
 * reading seen across providers, one per simulator. 24-hour markets (crypto, forex, metals, energy,
 * CFDs) ignore it: their bars stay UTC-aligned.
 */

/**
 * Intraday stock bars: `'session'` anchors periods at each session segment's start (09:30, and
 * 13:00 after a lunch break); `'clock'` aligns them to the exchange-local clock (an hourly bar
 * labelled 09:00 holds 09:30-10:00). The two differ only for hourly bars on these exchanges.
 */
export const SIM_INTRADAY_LABELLINGS = ['session', 'clock'] as const;
/**
 * Daily stock bars of trading date D: labelled D 00:00 exchange-local, D 00:00 UTC, D's first
 * session open, or inside D's session (`'in-session'`: 20 minutes before D's last close, as the
 * provider's own 700.HK sample is labelled 15:40 Hong Kong time).
 */
export const SIM_DAILY_LABELLINGS = ['local-midnight', 'utc-midnight', 'session-open', 'in-session'] as const;
/**
 * Weekly and monthly stock bars: labelled on the period's first calendar day (Monday, the 1st) or
 * on its first trading day, at the daily reading's time of that date.
 */
export const SIM_PERIOD_LABELLINGS = ['calendar', 'first-trading-day'] as const;

export type SimIntradayLabelling = (typeof SIM_INTRADAY_LABELLINGS)[number];
export type SimDailyLabelling = (typeof SIM_DAILY_LABELLINGS)[number];
export type SimPeriodLabelling = (typeof SIM_PERIOD_LABELLINGS)[number];

/** One reading of stock bar labels, per axis. */
export interface SimLabelling {
  readonly intraday: SimIntradayLabelling;
  readonly daily: SimDailyLabelling;
  readonly weekly: SimPeriodLabelling;
  readonly monthly: SimPeriodLabelling;
}

/** The axes of {@link SimLabelling} and the values each accepts. */
export const SIM_LABELLING_AXES: Readonly<Record<keyof SimLabelling, readonly string[]>> = {
  intraday: SIM_INTRADAY_LABELLINGS,
  daily: SIM_DAILY_LABELLINGS,
  weekly: SIM_PERIOD_LABELLINGS,
  monthly: SIM_PERIOD_LABELLINGS,
};

/** The simulator's default reading: session-anchored intraday bars, local midnight, Monday, the 1st. */
export const SIM_DEFAULT_LABELLING: SimLabelling = {
  intraday: 'session',
  daily: 'local-midnight',
  weekly: 'calendar',
  monthly: 'calendar',
};

/**
 * A small list of labellings that together use every value of every axis at least once (the
 * default first), for suites that run once per labelling.
 * @example
 * for (const labelling of SIM_LABELLINGS) {
 *   await using sim = await startSimulator({ labelling });
 *   // … the client must stay exact under each
 * }
 */
export const SIM_LABELLINGS: readonly SimLabelling[] = [
  SIM_DEFAULT_LABELLING,
  { intraday: 'clock', daily: 'utc-midnight', weekly: 'first-trading-day', monthly: 'first-trading-day' },
  { intraday: 'session', daily: 'session-open', weekly: 'first-trading-day', monthly: 'calendar' },
  { intraday: 'clock', daily: 'in-session', weekly: 'calendar', monthly: 'first-trading-day' },
];

/**
 * The full labelling of `partial` (missing axes take the default). Throws a RangeError naming the
 * axis, the allowed values and the value got, for an unknown axis or value.
 * @param name how the caller's option is called in the message. @defaultValue 'labelling'
 */
export function resolveSimLabelling(partial: Partial<SimLabelling> = {}, name = 'labelling'): SimLabelling {
  if (typeof partial !== 'object' || partial === null)
    throw new RangeError(`"${name}" must be an object, got ${JSON.stringify(partial)}`);
  for (const [axis, value] of Object.entries(partial) as [string, unknown][]) {
    const allowed = SIM_LABELLING_AXES[axis as keyof SimLabelling] as readonly string[] | undefined;
    if (allowed === undefined)
      throw new RangeError(
        `"${name}" axes are ${Object.keys(SIM_LABELLING_AXES).join(', ')}, got ${JSON.stringify(axis)}`,
      );
    if (value !== undefined && !allowed.includes(value as string))
      throw new RangeError(
        `"${name}.${axis}" must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`,
      );
  }
  const pick = <K extends keyof SimLabelling>(axis: K): SimLabelling[K] =>
    partial[axis] ?? SIM_DEFAULT_LABELLING[axis];
  return {
    intraday: pick('intraday'),
    daily: pick('daily'),
    weekly: pick('weekly'),
    monthly: pick('monthly'),
  };
}
