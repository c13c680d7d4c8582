import { InvalidOptionError } from '@quoteflow/core';
import type { KafkaKlineSinkOptions } from '../kafka-kline-sink-options.js';
import { KAFKA_DRIVERS } from '../kafka-sink.js';
import type { KafkaTransactionalDriverFactory } from '../kafka-transactional-driver.js';
import { KafkajsDriver } from '../kafkajs-driver.js';
import { PlatformaticKafkaDriver } from '../platformatic-driver.js';

/** The factory of the K-line sink's `driver` option: a built-in driver by name, or the caller's own. */
export function transactionalDriverFactory(
  driver: KafkaKlineSinkOptions['driver'],
): KafkaTransactionalDriverFactory {
  if (driver === undefined || driver === 'kafkajs') return (d) => new KafkajsDriver(d);
  if (driver === 'platformatic') return (d) => new PlatformaticKafkaDriver(d);
  if (typeof driver === 'function') return driver;
  throw new InvalidOptionError(
    'driver',
    `kafka: "driver" must be ${KAFKA_DRIVERS.join(' or ')} or a factory, got ${JSON.stringify(driver)}`,
  );
}
