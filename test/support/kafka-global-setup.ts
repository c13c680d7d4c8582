/**
 * Vitest global set-up of the integration project: owns the Kafka broker of this test run.
 *
 * Unless `KAFKA_BROKERS` names a cluster, the tests get a single-node Apache Kafka broker (KRaft)
 * on 127.0.0.1 from `scripts/kafka/broker.sh`, in an instance directory of this run. The broker
 * is started on first use (`kafkaBrokers()` in test/support/kafka.ts), so runs without Kafka
 * tests do not pay for it, and stopped here when the run ends (or, should this process die
 * without a teardown, by the broker script's watchdog).
 */
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The instance directory of this run's broker (empty when `KAFKA_BROKERS` is set). */
    kafkaInstanceDir: string;
    /** The process whose exit stops the run's broker (this one). */
    kafkaWatchPid: number;
  }
}

const run = promisify(execFile);
export const REPO_ROOT = join(import.meta.dirname, '..', '..');
export const BROKER_SCRIPT = join(REPO_ROOT, 'scripts', 'kafka', 'broker.sh');

export default function setup(project: TestProject): () => Promise<void> {
  const external = process.env['KAFKA_BROKERS'];
  const dir = external ? '' : join(REPO_ROOT, '.cache', 'kafka', 'instances', `vitest-${process.pid}`);
  project.provide('kafkaInstanceDir', dir);
  project.provide('kafkaWatchPid', process.pid);
  return async () => {
    if (!dir) return;
    await run('bash', [BROKER_SCRIPT, 'stop'], { env: { ...process.env, KAFKA_INSTANCE_DIR: dir } });
    await rm(dir, { recursive: true, force: true });
  };
}
