/**
 * Vitest global set-up of the integration project: owns the Kafka broker of this test run.
 *
 * Unless `KAFKA_BROKERS` names a cluster, the tests get a single-node Apache Kafka broker (KRaft)
 * on 127.0.0.1 from `scripts/kafka/broker.sh`, in an instance directory of this run. The broker
 * is started on first use (`kafkaBrokers()` in test/support/kafka.ts), so runs without Kafka
 * tests do not pay for it, and stopped here when the run ends (or, should this process die
 * without a teardown, by the broker script's watchdog). Under the `containers` test engine
 * (test-engine.ts) the broker is a container, removed here too; containers of earlier runs whose
 * process is gone are removed when a run starts (Ryuk, testcontainers' reaper, is off).
 */
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { testEngine } from './test-engine.js';

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

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env['KAFKA_BROKERS'];
  const dir = external ? '' : join(REPO_ROOT, '.cache', 'kafka', 'instances', `vitest-${process.pid}`);
  project.provide('kafkaInstanceDir', dir);
  project.provide('kafkaWatchPid', process.pid);
  const engine = await testEngine();
  console.error(
    `test engine: ${engine} (Kafka and Redis ${engine === 'containers' ? 'in containers' : 'on the host'})`,
  );
  if (engine === 'containers') await (await import('./containers.js')).reapOrphans();
  return async () => {
    if (!dir) return;
    if (engine === 'containers') await (await import('./kafka-container.js')).removeRunKafkaContainer(dir);
    await run('bash', [BROKER_SCRIPT, 'stop'], { env: { ...process.env, KAFKA_INSTANCE_DIR: dir } });
    await rm(dir, { recursive: true, force: true });
  };
}
