import { FAMILIES, calendarOf, type KlineType, type PlanLimits } from '@quoteflow/core';
import { familyOf } from '@quoteflow/core/internal';
import { ClusterError } from './cluster-error.js';

/**
 * The codes of a K-line sync cut into the units a cluster divides (`clusterSync`'s `units`), each
 * as much as one `/batch-kline` request of the plan carries: its codes × `klineTypes` are at most
 * `limits.batchKlineGroups` groups, all of one endpoint family (a request holds one family), codes
 * of one market side by side (in input order within it), so a market that is closed leaves whole
 * units idle instead of a little room in every worker's request. Workers then hold whole requests
 * and the cluster asks for no more of them per poll than one client polling the whole universe: a
 * universe that fits one request is held by one worker while the others stand by to take it over,
 * a larger one is divided request by request. The token has one `/batch-kline` slot per interval,
 * so a universe cut by series instead (a third to each of three workers) would cost three requests
 * where one client sends one, and every series would be polled three times less often.
 *
 * Every worker of the sync must pass the same codes, kline types and limits.
 *
 * @throws ClusterError `QF_INVALID_OPTION` when `klineTypes` is empty.
 * @example
 * ```ts
 * batchKlineUnits(['BTCUSDT', 'ETHUSDT', 'AAPL.US'], [1, 5], planLimits('premium'));
 * // [['BTCUSDT', 'ETHUSDT'], ['AAPL.US']]: one request of each family
 * ```
 */
export function batchKlineUnits(
  codes: readonly string[],
  klineTypes: readonly KlineType[],
  limits: Pick<PlanLimits, 'batchKlineGroups'>,
): string[][] {
  if (klineTypes.length === 0)
    throw new ClusterError('QF_INVALID_OPTION', 'batchKlineUnits: "klineTypes" must not be empty');
  const perUnit = Math.max(1, Math.floor(limits.batchKlineGroups / new Set(klineTypes).size));
  const unique = [...new Set(codes)];
  const units: string[][] = [];
  for (const family of FAMILIES) {
    const byMarket = new Map<string, string[]>();
    for (const code of unique) {
      if (familyOf(code) !== family) continue;
      const market = calendarOf(code).id;
      let list = byMarket.get(market);
      if (list === undefined) byMarket.set(market, (list = []));
      list.push(code);
    }
    const ordered = [...byMarket.keys()].sort().flatMap((market) => byMarket.get(market)!);
    for (let i = 0; i < ordered.length; i += perUnit) units.push(ordered.slice(i, i + perUnit));
  }
  return units;
}
