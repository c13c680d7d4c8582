/** Maps a request path to the endpoint it names (spec, Endpoints). */
import type { SimEndpoint } from '../sim-plans.js';
import { SIM_EXCHANGES, type SimExchange } from '../suspension-records.js';

export interface Route {
  readonly endpoint: SimEndpoint;
  readonly family: 'stock' | 'general' | SimExchange;
}

export function routeOf(path: string): Route | undefined {
  const susp = /^\/api\/suspension\/([a-z]+)$/.exec(path);
  if (susp !== null)
    return (SIM_EXCHANGES as readonly string[]).includes(susp[1]!)
      ? { endpoint: 'suspension', family: susp[1] as SimExchange }
      : undefined;
  const m = /^\/(quote-stock-b-api|quote-b-api)\/(static_info|depth-tick|kline|batch-kline)$/.exec(path);
  if (m === null) return undefined;
  const family = m[1] === 'quote-stock-b-api' ? 'stock' : 'general';
  const names: Readonly<Record<string, SimEndpoint>> = {
    static_info: 'static-info',
    'depth-tick': 'depth-tick',
    kline: 'kline',
    'batch-kline': 'batch-kline',
  };
  const endpoint = names[m[2]!]!;
  if (endpoint === 'static-info' && family === 'general') return undefined; // the spec has no general static info
  return { endpoint, family };
}
