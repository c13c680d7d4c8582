// Messages between the soak harness and its simulator process (soak-sim.ts), over `fork`'s IPC.

/** What the simulator process starts with (`SOAK_SIM_CONFIG`, JSON). */
export interface SoakSimConfig {
  readonly token: string;
  readonly seed: number;
  /** Synthetic products added to the default catalogue (`syntheticCatalogue`). */
  readonly synthetic: number;
  /** Halts served (suspension records, bars left out): `SimHalt`s. */
  readonly halts: readonly { code: string; fromMs: number; toMs: number }[];
  /** Every request served, one TSV line each (arrival ms, endpoint, groups or codes, refusing rule). */
  readonly requestLogFile?: string;
}

/** Requests of one Shanghai date (the service's daily reset), refusals among them, by endpoint. */
export interface SoakDayCount {
  readonly date: string;
  requests: number;
  refused: number;
  readonly byEndpoint: Record<string, number>;
}

export type SoakSimRequest =
  | { readonly type: 'counts'; readonly id: number }
  | {
      readonly type: 'bars';
      readonly id: number;
      readonly code: string;
      readonly klineType: number;
      readonly nowMs: number;
      readonly fromMs: number;
      readonly toMs: number;
      readonly count: number;
    }
  | { readonly type: 'close'; readonly id: number };

export type SoakSimReply =
  | { readonly type: 'ready'; readonly id: number; readonly url: string }
  | { readonly type: 'counts' | 'closed'; readonly id: number; readonly days: readonly SoakDayCount[] }
  | { readonly type: 'bars'; readonly id: number; readonly bars: readonly (readonly [number, number])[] };
