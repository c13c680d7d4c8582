import { SIM_LABELLING_AXES, type SimLabelling } from './sim-labelling.js';

/**
 * Parses a `quoteflow sim --labelling AXIS=VALUE,…` value into the `labelling` option of
 * `startSimulator` (any subset of the axes; the others keep their defaults). Throws a RangeError
 * naming the flag, the bad axis or value and the allowed ones.
 * @example parseSimLabelling('intraday=clock,daily=utc-midnight') // { intraday: 'clock', daily: 'utc-midnight' }
 */
export function parseSimLabelling(value: string): Partial<SimLabelling> {
  const out: Record<string, string> = {};
  const axes = Object.keys(SIM_LABELLING_AXES);
  for (const part of value.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const i = item.indexOf('=');
    const axis = i < 0 ? item : item.slice(0, i).trim();
    const allowed = SIM_LABELLING_AXES[axis as keyof SimLabelling] as readonly string[] | undefined;
    if (allowed === undefined || i < 0)
      throw new RangeError(
        `--labelling must be AXIS=VALUE pairs separated by commas, AXIS one of ${axes.join(', ')}; got ${JSON.stringify(item)}`,
      );
    const v = item.slice(i + 1).trim();
    if (!allowed.includes(v))
      throw new RangeError(
        `--labelling ${axis} must be one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`,
      );
    if (out[axis] !== undefined && out[axis] !== v)
      throw new RangeError(`--labelling names ${axis} twice (${out[axis]}, ${v})`);
    out[axis] = v;
  }
  return out as Partial<SimLabelling>;
}
