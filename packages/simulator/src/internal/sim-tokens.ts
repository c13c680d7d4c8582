/** The simulator's tokens: each one's plan, safe log label and limit windows. */
import { RateLimiter } from '../rate-limiter.js';
import { SIM_PLANS, simPlanLimits, type SimPlan } from '../sim-plans.js';
import type { SimTokenSpec } from '../start-simulator.js';
import { tokenLabel } from '../token-label.js';
import { checkOption } from './check-option.js';

/** What the simulator knows of one token while it serves. */
export interface TokenState {
  readonly plan: SimPlan;
  readonly label: string;
  readonly limiter: RateLimiter;
}

export class SimTokens {
  readonly #states = new Map<string, TokenState>();
  readonly #specs = new Map<string, SimPlan | SimTokenSpec>();
  readonly #limiterOptions: { readonly countRefused: boolean; readonly dayTimeZone: string };

  constructor(limiterOptions: { readonly countRefused: boolean; readonly dayTimeZone: string }) {
    this.#limiterOptions = limiterOptions;
  }

  /** Adds or replaces a token, with fresh limit windows; refuses a plan the simulator does not know. */
  set(token: string, spec: SimPlan | SimTokenSpec): void {
    this.#specs.set(token, spec);
    const s = typeof spec === 'string' ? { plan: spec } : spec;
    checkOption(
      (SIM_PLANS as readonly string[]).includes(s.plan),
      'tokens',
      `plans from ${SIM_PLANS.join(', ')}`,
      s.plan,
    );
    this.#states.set(token, {
      plan: s.plan,
      label: tokenLabel(token, s.plan),
      limiter: new RateLimiter(simPlanLimits(s.plan, s.overrides), this.#limiterOptions),
    });
  }

  get(token: string): TokenState | undefined {
    return this.#states.get(token);
  }

  /** Forgets every token's arrivals, so the next request starts clean. */
  reset(): void {
    this.#specs.forEach((spec, token) => this.set(token, spec));
  }
}
