import type { QuoteflowClient } from '../client.js';

/** The part of {@link QuoteflowClient} the sources use (tests may pass a fake of it). */
export type SourceClient = Pick<
  QuoteflowClient,
  'depth' | 'batchKline' | 'kline' | 'suspensions' | 'staticInfo' | 'limits' | 'canPageBackwards'
>;
