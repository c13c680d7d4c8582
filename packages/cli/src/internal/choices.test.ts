import { EXCHANGES, KLINE_TYPES, PLANS } from '@quoteflow/core';
import { DATASET_FORMATS, KAFKA_DELIVERIES } from '@quoteflow/sinks';
import { describe, expect, it } from 'vitest';
import {
  DATASET_FORMAT_CHOICES,
  EXCHANGE_CHOICES,
  KAFKA_DELIVERY_CHOICES,
  KLINE_TYPE_CHOICES,
  PLAN_CHOICES,
} from './choices.js';

describe('CLI choices (copies kept so that listing commands loads no package)', () => {
  it('equal the lists of core and sinks, in order', () => {
    expect(PLAN_CHOICES).toEqual(PLANS);
    expect(EXCHANGE_CHOICES).toEqual(EXCHANGES);
    expect(KLINE_TYPE_CHOICES).toEqual(KLINE_TYPES);
    expect(DATASET_FORMAT_CHOICES).toEqual(DATASET_FORMATS);
    expect(KAFKA_DELIVERY_CHOICES).toEqual(KAFKA_DELIVERIES);
  });
});
