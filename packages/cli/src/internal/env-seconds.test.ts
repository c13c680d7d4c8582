import { describe, expect, it } from 'vitest';
import { CLI_KAFKA_DELIVERY_TIMEOUT_MS, cliKafkaSinkOptions } from './check-kafka.js';
import { sinkConnectTimeoutMs } from './sink-connect-timeout.js';
import { statusIntervalMs } from './status-ticker.js';
import { UsageError } from './usage-error.js';

const kafka = { brokers: '127.0.0.1:9092', topicPrefix: 'qf', createTopics: true };

describe('the timeouts a command waits out', () => {
  it('waits 30 s for Kafka or Redis at start, or the --duration when longer, unless QUOTEFLOW_CONNECT_TIMEOUT_S says', () => {
    expect(sinkConnectTimeoutMs(undefined, {})).toBe(30_000);
    expect(sinkConnectTimeoutMs(5, {})).toBe(30_000);
    expect(sinkConnectTimeoutMs(45, {})).toBe(45_000);
    expect(sinkConnectTimeoutMs(undefined, { QUOTEFLOW_CONNECT_TIMEOUT_S: '2' })).toBe(2_000);
    expect(sinkConnectTimeoutMs(5, { QUOTEFLOW_CONNECT_TIMEOUT_S: '2' })).toBe(5_000);
    expect(sinkConnectTimeoutMs(undefined, { QUOTEFLOW_CONNECT_TIMEOUT_S: '' })).toBe(30_000);
  });

  it('gives a Kafka batch 30 s for its acknowledgement, unless QUOTEFLOW_KAFKA_DELIVERY_TIMEOUT_S says', () => {
    expect(CLI_KAFKA_DELIVERY_TIMEOUT_MS).toBe(30_000);
    expect(cliKafkaSinkOptions(kafka, {})).toEqual({ ...kafka, deliveryTimeoutMs: 30_000 });
    expect(cliKafkaSinkOptions(kafka, { QUOTEFLOW_KAFKA_DELIVERY_TIMEOUT_S: '0.5' })).toEqual({
      ...kafka,
      deliveryTimeoutMs: 500,
    });
  });

  it.each([
    ['QUOTEFLOW_CONNECT_TIMEOUT_S', (env: Record<string, string>) => sinkConnectTimeoutMs(undefined, env)],
    ['QUOTEFLOW_KAFKA_DELIVERY_TIMEOUT_S', (env: Record<string, string>) => cliKafkaSinkOptions(kafka, env)],
    ['QUOTEFLOW_STATUS_INTERVAL_S', (env: Record<string, string>) => statusIntervalMs(env)],
  ])('refuses %s that is not a positive number of seconds, naming it (exit 2)', (name, read) => {
    for (const bad of ['0', '-1', 'soon', 'Infinity']) {
      expect(() => read({ [name]: bad })).toThrow(UsageError);
      expect(() => read({ [name]: bad })).toThrow(
        `${name} must be a positive number of seconds, got "${bad}"`,
      );
    }
  });
});
