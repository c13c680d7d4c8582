import { UsageError } from './usage-error.js';

/** A duration as the CLI writes one: a number and a unit, s, m, h or d (`168h`, `30m`, `7d`, `0s`). */
export const DURATION_PATTERN = /^(\d+(?:\.\d+)?)(s|m|h|d)$/;

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `<n>s|m|h|d` as milliseconds, or `undefined` when the text is not such a duration. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION_PATTERN.exec(text.trim());
  if (m === null) return undefined;
  return Math.round(Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]);
}

/** A duration flag's value in ms (`<n>s|m|h|d`); exit 2 naming the flag when the text is not one. */
export function durationFlag(flag: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined)
    throw new UsageError(
      `${flag} must be a duration such as 168h, 7d, 30m or 0s, got ${JSON.stringify(text)}`,
    );
  return ms;
}
