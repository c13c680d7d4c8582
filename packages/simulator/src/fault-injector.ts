import type { SimEndpoint } from './sim-plans.js';
import { mulberry32 } from './internal/hash.js';

/** Kinds of injected faults. */
export const FAULT_KINDS = [
  /** Delay the response by `latencyMs`. */
  'latency',
  /** Answer with HTTP `status` (default 503) and a non-JSON body. */
  'http-5xx',
  /** HTTP 200 with a body that is not valid JSON. */
  'malformed-json',
  /** HTTP 200 whose body is cut in the middle (Content-Length matches the cut body). */
  'truncated',
  /** Destroy the connection without answering. */
  'drop',
  /** Answer "rate limit" (ret 429; HTTP 500 `{success:false}` on suspension endpoints). */
  'rate-limit',
  /** `/kline`, `/batch-kline`: bars newest first, then the same list repeated (provider-facts.md, known defects). */
  'kline-newest-first-repeated',
  /** `/kline`, `/batch-kline`: `volume` and `turnover` of the first bar are `""` (known defects). */
  'kline-empty-first-volume',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** One fault rule. Without `probability` and `times` it hits every matching request. */
export interface FaultRule {
  readonly kind: FaultKind;
  /** Endpoints it applies to (default: all). */
  readonly endpoint?: SimEndpoint | readonly SimEndpoint[];
  /** Chance per matching request, 0..1 (seeded, so a run is reproducible). @defaultValue 1 */
  readonly probability?: number;
  /** Hit only the next `times` matching requests (that the probability lets through), then expire. */
  readonly times?: number;
  /** For `latency`. @defaultValue 1000 */
  readonly latencyMs?: number;
  /** For `http-5xx`. @defaultValue 503 */
  readonly status?: number;
}

interface LiveRule {
  readonly rule: FaultRule;
  remaining: number;
}

/** Decides, per request, which faults to inject: probabilistic and/or a deterministic schedule. */
export class FaultInjector {
  #rules: LiveRule[] = [];
  readonly #random: () => number;

  constructor(rules: readonly FaultRule[], seed: number) {
    this.#random = mulberry32(seed ^ 0xfa17);
    this.set(rules);
  }

  /** Replaces every rule. */
  set(rules: readonly FaultRule[]): void {
    for (const r of rules) validate(r);
    this.#rules = rules.map((rule) => ({ rule, remaining: rule.times ?? Number.POSITIVE_INFINITY }));
  }

  /** Adds a rule (for example "fail the next 3 `/kline` requests with 503"). */
  add(rule: FaultRule): void {
    validate(rule);
    this.#rules.push({ rule, remaining: rule.times ?? Number.POSITIVE_INFINITY });
  }

  /** The rules currently active. */
  rules(): FaultRule[] {
    return this.#rules.map((r) => r.rule);
  }

  /** The faults to inject into one request of `endpoint`. */
  pick(endpoint: SimEndpoint | 'unknown'): FaultRule[] {
    const hits: FaultRule[] = [];
    for (const live of this.#rules) {
      const { rule } = live;
      if (live.remaining <= 0) continue;
      if (rule.endpoint !== undefined) {
        const eps: readonly string[] = typeof rule.endpoint === 'string' ? [rule.endpoint] : rule.endpoint;
        if (!eps.includes(endpoint)) continue;
      }
      if (rule.probability !== undefined && this.#random() >= rule.probability) continue;
      live.remaining--;
      hits.push(rule);
    }
    this.#rules = this.#rules.filter((r) => r.remaining > 0);
    return hits;
  }
}

function validate(rule: FaultRule): void {
  if (!(FAULT_KINDS as readonly string[]).includes(rule.kind)) {
    throw new RangeError(
      `fault "kind" must be one of ${FAULT_KINDS.join(', ')}, got ${JSON.stringify(rule.kind)}`,
    );
  }
  if (rule.probability !== undefined && !(rule.probability >= 0 && rule.probability <= 1)) {
    throw new RangeError(`fault "probability" must be from 0 to 1, got ${rule.probability}`);
  }
  if (rule.times !== undefined && !(Number.isInteger(rule.times) && rule.times >= 1)) {
    throw new RangeError(`fault "times" must be a positive integer, got ${rule.times}`);
  }
  if (
    rule.status !== undefined &&
    !(Number.isInteger(rule.status) && rule.status >= 500 && rule.status <= 599)
  ) {
    throw new RangeError(`fault "status" must be an HTTP 5xx status, got ${rule.status}`);
  }
}
