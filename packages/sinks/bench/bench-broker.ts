/**
 * The Kafka cluster of a benchmark: `KAFKA_BROKERS` if set, else a single-node broker started with
 * scripts/kafka/broker.sh in instance `.cache/kafka/instances/<instance>` (stopped by `stop()`, or
 * by the script's watchdog should the benchmark die).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export interface BenchBroker {
  readonly brokers: string;
  /** Whether the benchmark started it (else it is `KAFKA_BROKERS`). */
  readonly startedHere: boolean;
  stop(): void;
}

export function benchBroker(instance: string): BenchBroker {
  const external = process.env['KAFKA_BROKERS'] ?? '';
  if (external !== '') return { brokers: external, startedHere: false, stop: () => undefined };
  const root = join(import.meta.dirname, '..', '..', '..');
  const script = join(root, 'scripts', 'kafka', 'broker.sh');
  const env = {
    ...process.env,
    KAFKA_INSTANCE_DIR: join(root, '.cache', 'kafka', 'instances', instance),
    KAFKA_WATCH_PID: String(process.pid),
  };
  const brokers = execFileSync('bash', [script, 'start'], {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  return {
    brokers,
    startedHere: true,
    stop: () => void execFileSync('bash', [script, 'stop'], { env, stdio: 'inherit' }),
  };
}
