import { SIM_PLANS, type SimPlan } from './sim-plans.js';

/**
 * Parses `quoteflow sim --token T:PLAN` values into the `tokens` option of `startSimulator`.
 * A value without `:PLAN` gets `professional`. No values → `{ demo: 'professional' }`.
 * Throws a RangeError naming the bad value's plan (never the token) on an unknown plan.
 * @example parseTokenSpecs(['demo:professional', 't2:basic']) // { demo: 'professional', t2: 'basic' }
 */
export function parseTokenSpecs(values: readonly string[]): Record<string, SimPlan> {
  if (values.length === 0) return { demo: 'professional' };
  const out: Record<string, SimPlan> = {};
  for (const value of values) {
    const i = value.lastIndexOf(':');
    const token = i < 0 ? value : value.slice(0, i);
    const plan = i < 0 ? 'professional' : value.slice(i + 1);
    if (token === '') throw new RangeError('--token must be TOKEN:PLAN with a non-empty token');
    if (!(SIM_PLANS as readonly string[]).includes(plan)) {
      throw new RangeError(
        `--token plan must be one of ${SIM_PLANS.join(', ')}, got ${JSON.stringify(plan)}`,
      );
    }
    out[token] = plan as SimPlan;
  }
  return out;
}
