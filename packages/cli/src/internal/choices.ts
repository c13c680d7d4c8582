import type { Exchange, KlineType, Plan } from '@quoteflow/core';
import type { DatasetFormat, KafkaDelivery } from '@quoteflow/sinks';

// The value lists commander needs to register options (choices, argument checks). They are copies
// of core's PLANS/EXCHANGES/KLINE_TYPES and sinks' DATASET_FORMATS, because importing those packages
// just to list commands costs ~1.5 s (undici, zod, the Kafka client); choices.test.ts fails if a
// copy drifts from its source, and the `satisfies` clauses reject a value the source does not know.

/** Core's `PLANS`, for `--plan`. */
export const PLAN_CHOICES = [
  'free',
  'basic',
  'premium',
  'professional',
  'all-hk',
  'all-cn',
  'all-us',
] as const satisfies readonly Plan[];

/** Core's `EXCHANGES`, for `--exchange`. */
export const EXCHANGE_CHOICES = ['sse', 'nyse', 'nasdaq'] as const satisfies readonly Exchange[];

/** Sinks' `DATASET_FORMATS`, for `--format`. */
export const DATASET_FORMAT_CHOICES = [
  'parquet',
  'arrow',
  'ndjson',
] as const satisfies readonly DatasetFormat[];

/** Sinks' `KAFKA_DELIVERIES`, for `--kafka-delivery`. */
export const KAFKA_DELIVERY_CHOICES = [
  'exactly-once',
  'at-least-once',
] as const satisfies readonly KafkaDelivery[];

/** What each kline type is (spec: the K-line type table), for help texts. */
export const KLINE_TYPE_HELP =
  '1 = 1 min, 2 = 5 min, 3 = 15 min, 4 = 30 min, 5 = 1 hour, 6 = 2 hours, 7 = 4 hours, 8 = day, 9 = week, 10 = month (stocks have no 6 or 7)';

/** Core's `KLINE_TYPES`, for `--kline-types`. */
export const KLINE_TYPE_CHOICES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] as const satisfies readonly KlineType[];
