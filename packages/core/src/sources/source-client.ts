import type { QuoteflowClient } from '../client.js';

/**
 * The part of {@link QuoteflowClient} the sources use (tests may pass a fake of it). Sources poll
 * on `clock` unless given an RxJS scheduler.
 */
export type SourceClient = Pick<
  QuoteflowClient,
  | 'depth'
  | 'batchKline'
  | 'kline'
  | 'suspensions'
  | 'staticInfo'
  | 'limits'
  | 'canPageBackwards'
  | 'familyOf'
  | 'clock'
>;
