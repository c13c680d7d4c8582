import { Option } from 'commander';

/**
 * The plan rules `--limit` can tighten: core's `WINDOW_RULE_IDS`, repeated here so that the help
 * texts do not load core at start-up (a test keeps the two equal).
 */
export const LIMIT_RULE_IDS = [
  'combined',
  'per-minute',
  'static-info-rate',
  'depth-tick-rate',
  'kline-rate',
  'batch-kline-interval',
  'suspension-interval',
] as const;

/** What `--limit` and `QUOTEFLOW_LIMITS` take, for help texts. */
export const LIMIT_SYNTAX =
  `RULE=N or RULE=N/WINDOW (window in ms, s, m or h), where RULE is one of ${LIMIT_RULE_IDS.join(', ')}; ` +
  `or per-day=N, batch-kline.groups=N, codes-per-request=N. Only tighter than the plan.`;

/** `--limit RULE=VALUE`, repeatable: every command that calls the service, and `plan`. */
export function limitOption(): Option {
  return new Option(
    '--limit <rule=value>',
    `a tighter limit than the plan's, repeatable (env QUOTEFLOW_LIMITS, comma-separated): ${LIMIT_SYNTAX}`,
  ).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
}
