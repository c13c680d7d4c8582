import type { EndpointKind } from '../plans.js';

/**
 * One HTTP request as an endpoint's builder describes it, without the token and base URL, which
 * only the client adds (so a spec can be logged or compared safely).
 */
export interface RequestSpec {
  readonly endpoint: EndpointKind;
  readonly method: 'GET' | 'POST';
  /** Path from the base URL, starting with `/`. */
  readonly path: string;
  /** Query-string parameters other than `token`, unencoded. */
  readonly query: Readonly<Record<string, string>>;
  /** JSON body (POST only). */
  readonly body: string | undefined;
  /** The request's unique trace (`undefined` for suspension queries, which take none). */
  readonly trace: string | undefined;
  /** What was asked: codes, or `code:klineType` groups, to check the response against. */
  readonly asked: readonly string[];
}

/** Request headers every call sends (spec: the call examples use `Accept: application/json`). */
export const ACCEPT_JSON = { accept: 'application/json' } as const;
/** Request headers of a JSON POST. */
export const POST_JSON = { accept: 'application/json', 'content-type': 'application/json' } as const;
