/**
 * Which engine runs the integration tests' Kafka broker and Redis: `containers` (testcontainers,
 * the local images of scripts/containers/setup.sh) or `host` (the Maven Central jars through
 * scripts/kafka/broker.sh, and `redis-server`). `QUOTEFLOW_TEST_ENGINE` chooses; unset, containers
 * are used when a Docker API answers and both images are there. `KAFKA_BROKERS` and `REDIS_URL`
 * bypass both. Decided once per process.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const TEST_ENGINES = ['containers', 'host'] as const;
export type TestEngine = (typeof TEST_ENGINES)[number];

/**
 * Image names built by scripts/containers/setup.sh (the Kafka version as in scripts/kafka). The
 * Kafka tag carries a hash of the broker's configuration files, as setup.sh computes it, so two
 * checkouts on one machine never run each other's broker settings.
 */
export const KAFKA_IMAGE = `localhost/quoteflow-test-kafka:${process.env['KAFKA_VERSION'] ?? '4.1.0'}-${kafkaConfigHash()}`;
export const REDIS_IMAGE = 'localhost/quoteflow-test-redis:latest';
/** Label on every container the tests start: the pid of the process that owns it (see reapOrphans). */
export const OWNER_LABEL = 'dev.quoteflow.test.owner-pid';

const PODMAN_SOCKET = '/run/podman/podman.sock';

let decided: Promise<TestEngine> | undefined;

/**
 * Points testcontainers at podman's socket when no Docker endpoint is configured, and turns Ryuk
 * off: its image cannot be pulled here, and test/support removes its own containers instead.
 */
export function configureTestcontainersEnv(): void {
  const env = process.env;
  if (env['DOCKER_HOST'] === undefined && !existsSync('/var/run/docker.sock') && existsSync(PODMAN_SOCKET))
    env['DOCKER_HOST'] = `unix://${PODMAN_SOCKET}`;
  env['TESTCONTAINERS_RYUK_DISABLED'] ??= 'true';
}

async function detect(): Promise<TestEngine> {
  const chosen = process.env['QUOTEFLOW_TEST_ENGINE'];
  if (chosen !== undefined && chosen !== '') {
    if (!(TEST_ENGINES as readonly string[]).includes(chosen))
      throw new Error(`QUOTEFLOW_TEST_ENGINE must be one of ${TEST_ENGINES.join(', ')}, got ${chosen}`);
    return chosen as TestEngine;
  }
  configureTestcontainersEnv();
  const { getContainerRuntimeClient, ImageName } = await import('testcontainers');
  try {
    const client = await getContainerRuntimeClient();
    for (const image of [KAFKA_IMAGE, REDIS_IMAGE])
      if (!(await client.image.exists(ImageName.fromString(image)))) {
        console.error(`test engine: host (${image} is missing: bash scripts/containers/setup.sh builds it)`);
        return 'host';
      }
    return 'containers';
  } catch {
    return 'host'; // no Docker API answers: the jars and redis-server on the host
  }
}

/** The engine of this process: `QUOTEFLOW_TEST_ENGINE`, else containers when they can run. */
export function testEngine(): Promise<TestEngine> {
  decided ??= detect();
  return decided;
}

/** sha256 of the broker image's configuration files, in setup.sh's order, 12 hex digits. */
function kafkaConfigHash(): string {
  const root = join(import.meta.dirname, '..', '..', 'scripts');
  const hash = createHash('sha256');
  for (const file of [
    'containers/kafka.Containerfile',
    'containers/kafka-entrypoint.sh',
    'containers/log4j2.properties',
    'kafka/broker-settings.properties',
    'kafka/broker-security.properties',
    'kafka/security-config.sh',
    'kafka/test-users.txt',
  ])
    hash.update(readFileSync(join(root, file)));
  return hash.digest('hex').slice(0, 12);
}
