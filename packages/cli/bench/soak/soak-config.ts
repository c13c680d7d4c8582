// The settings of `pnpm bench soak`, from the environment (each named in BENCHMARKS.md's soak
// section), checked before anything starts.

const DAY_MS = 86_400_000;

/** What one soak run does. */
export interface SoakConfig {
  /** Market ms per real ms of the run's one shared clock. */
  readonly speed: number;
  /** Simulated days (7: a week; 1: the CI step's day). */
  readonly days: number;
  /** The first simulated instant: a Monday 00:00 UTC. */
  readonly startMs: number;
  /** Synthetic products (us, hk, cn stocks and crypto in turn) beside the default catalogue's 69. */
  readonly synthetic: number;
  /** Seed of the market and of the kill moments. */
  readonly seed: number;
  /** Simulated minutes between two samples of each process. */
  readonly sampleMinutes: number;
  /**
   * Simulated minutes the commands run past the week's end before their SIGTERM, so that every bar
   * that closed in the week can have reached the sinks (the final check asks for all of them); then
   * the end waits, up to 5 real minutes, for the sync to have caught up and committed
   * (soak-settle.ts), so that the CI step's check cannot miss a bar only for a slow machine.
   */
  readonly graceMinutes: number;
  /** Depth interval of `quoteflow depth` (market ms). */
  readonly depthIntervalMs: number;
  /** Keep the run's directory (datasets, logs) for a look afterwards. */
  readonly keep: boolean;
  /** Exit 1 when a target is missed (the CI step): else the figures are only printed. */
  readonly strict: boolean;
}

function num(env: NodeJS.ProcessEnv, name: string, fallback: number, ok: (n: number) => boolean): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!ok(n)) throw new Error(`soak: ${name} must be ${ok.name || 'valid'}, got ${JSON.stringify(raw)}`);
  return n;
}

const positive = (n: number): boolean => Number.isFinite(n) && n > 0;
const whole = (n: number): boolean => Number.isInteger(n) && n >= 0;

/**
 * `SOAK_SPEED` (default 200), `SOAK_DAYS` (7), `SOAK_START` (2025-10-27T00:00:00Z: the week of the
 * US change from daylight saving time, Sunday 2 November, and of Hong Kong's Chung Yeung holiday,
 * Wednesday 29 October), `SOAK_SYNTHETIC` (0), `SOAK_SEED` (1), `SOAK_SAMPLE_MINUTES` (15), `SOAK_GRACE_MINUTES` (60),
 * `SOAK_DEPTH_INTERVAL_MS` (1000), `SOAK_KEEP=1`, `SOAK_STRICT=1`.
 */
export function soakConfig(env: NodeJS.ProcessEnv = process.env): SoakConfig {
  const start = env['SOAK_START'] ?? '2025-10-27T00:00:00Z';
  const startMs = Date.parse(start);
  if (!Number.isFinite(startMs) || new Date(startMs).getUTCDay() !== 1 || startMs % DAY_MS !== 0)
    throw new Error(`soak: SOAK_START must be a Monday 00:00 UTC, got ${JSON.stringify(start)}`);
  return {
    speed: num(env, 'SOAK_SPEED', 200, positive),
    days: num(env, 'SOAK_DAYS', 7, (n) => Number.isInteger(n) && n >= 1 && n <= 7),
    startMs,
    synthetic: num(env, 'SOAK_SYNTHETIC', 0, whole),
    seed: num(env, 'SOAK_SEED', 1, whole),
    sampleMinutes: num(env, 'SOAK_SAMPLE_MINUTES', 15, positive),
    graceMinutes: num(env, 'SOAK_GRACE_MINUTES', 60, whole),
    depthIntervalMs: num(env, 'SOAK_DEPTH_INTERVAL_MS', 1_000, positive),
    keep: env['SOAK_KEEP'] === '1',
    strict: env['SOAK_STRICT'] === '1',
  };
}

export { DAY_MS };
