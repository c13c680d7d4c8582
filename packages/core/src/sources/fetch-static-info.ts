import { defer, mergeMap, type Observable } from 'rxjs';
import type { StaticInfo } from '../domain.js';
import { InvalidOptionError } from '../errors.js';
import { fromAbortable } from '../internal/from-abortable.js';
import { nextSourceId } from '../internal/next-source-id.js';
import type { SourceClient } from './source-client.js';

/** Options of {@link fetchStaticInfo}. */
export interface FetchStaticInfoOptions {
  /** Stock codes (US, HK, A shares); split to the plan's codes per request by the client. */
  readonly codes: readonly string[];
  readonly sourceId?: string;
}

/**
 * Static info of every code, once: emits one record per code in the order asked, then
 * completes. Cold; unsubscribing aborts the requests in flight; a failure errors the stream.
 *
 * @example
 * fetchStaticInfo(client, { codes: ['700.HK', 'AAPL.US'] }).subscribe((info) => console.log(info.nameEn));
 */
export function fetchStaticInfo(
  client: SourceClient,
  options: FetchStaticInfoOptions,
): Observable<StaticInfo> {
  if (!Array.isArray(options.codes) || options.codes.length === 0)
    throw new InvalidOptionError('codes', 'fetchStaticInfo: "codes" must be a non-empty array');
  return defer(() => {
    const sourceId = options.sourceId ?? nextSourceId('static-info');
    return fromAbortable((signal) =>
      client.staticInfo(options.codes, { signal, priority: 'live', sourceId }),
    ).pipe(mergeMap((records) => records));
  });
}
