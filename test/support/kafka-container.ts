/**
 * The Kafka broker in a container (the `containers` test engine): the quoteflow-test-kafka image
 * (scripts/containers/setup.sh) started by testcontainers, single-node KRaft, published on a fixed
 * free port of 127.0.0.1 that it also advertises, so a stop and a start by container id keep the
 * bootstrap address, the topics and the offsets (the container's file system survives a stop).
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Wait } from 'testcontainers';
import kafkajs from 'kafkajs';
import {
  containerName,
  removeContainer,
  startContainer,
  stopContainer,
  testContainer,
} from './containers.js';
import { freePort } from './redis-server.js';
import { KAFKA_IMAGE } from './test-engine.js';

/** What the broker logs once it serves (as scripts/kafka/broker.sh waits for). */
const STARTED = 'Kafka Server started';

/** One broker container: its bootstrap address and its life cycle by id. */
export interface KafkaContainer {
  readonly id: string;
  /** `127.0.0.1:PORT`. */
  readonly brokers: string;
  /** Stops it (SIGTERM, then SIGKILL after 60 s); it keeps its port and data. */
  stop(): Promise<void>;
  /** Starts it again and waits until it serves. */
  start(): Promise<void>;
  /** Removes it with its data. */
  remove(): Promise<void>;
}

/** Starts a broker container named `quoteflow-test-kafka-<what>-…`, owned by `ownerPid`. */
export async function startKafkaContainer(what: string, ownerPid = process.pid): Promise<KafkaContainer> {
  const port = await freePort();
  const started = await testContainer(KAFKA_IMAGE, containerName(`kafka-${what}`), ownerPid)
    .withLoopbackPort(9092, port)
    .withEnvironment({ KAFKA_ADVERTISED_PORT: String(port) })
    .withWaitStrategy(Wait.forLogMessage(STARTED))
    .withStartupTimeout(180_000)
    .start();
  return kafkaContainer(started.getId(), `127.0.0.1:${port}`);
}

function kafkaContainer(id: string, brokers: string): KafkaContainer {
  return {
    id,
    brokers,
    stop: () => stopContainer(id, 60_000),
    start: async () => {
      await startContainer(id);
      await waitUntilServing(brokers, 180_000);
    },
    remove: () => removeContainer(id),
  };
}

/**
 * Waits until the broker answers a metadata request. Not the "started" log line: podman's Docker
 * API keeps a running container's log stream open, so reading the log again would not return.
 */
async function waitUntilServing(brokers: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const admin = new kafkajs.Kafka({
      clientId: 'qf-test-wait',
      brokers: [brokers],
      connectionTimeout: 1_000,
      retry: { retries: 0 },
      logLevel: kafkajs.logLevel.NOTHING,
    }).admin();
    try {
      await admin.connect();
      const cluster = await admin.describeCluster();
      if (cluster.brokers.length > 0) return;
    } catch {
      // not serving yet
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
    if (Date.now() > deadline)
      throw new Error(`the broker at ${brokers} did not serve within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * The run's shared broker container, recorded in `dir/container.json`: the first worker to ask
 * starts it (a lock directory serialises the workers), the others read the record.
 */
export async function runKafkaContainer(dir: string, ownerPid: number): Promise<string> {
  const record = join(dir, 'container.json');
  const lock = join(dir, 'lock');
  await mkdir(dir, { recursive: true });
  const deadline = Date.now() + 300_000;
  for (;;) {
    const known = await readRecord(record);
    if (known !== undefined) return known.brokers;
    try {
      await mkdir(lock);
    } catch {
      if (Date.now() > deadline) throw new Error(`no broker container recorded in ${record} within 300 s`);
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    try {
      const again = await readRecord(record);
      if (again !== undefined) return again.brokers;
      const broker = await startKafkaContainer('run', ownerPid);
      await writeFile(`${record}.tmp`, JSON.stringify({ id: broker.id, brokers: broker.brokers }));
      await rename(`${record}.tmp`, record);
      return broker.brokers;
    } finally {
      await rm(lock, { recursive: true, force: true });
    }
  }
}

/** Removes the run's broker container recorded in `dir`, if one was started. */
export async function removeRunKafkaContainer(dir: string): Promise<void> {
  const known = await readRecord(join(dir, 'container.json'));
  if (known !== undefined) await removeContainer(known.id);
}

async function readRecord(path: string): Promise<{ id: string; brokers: string } | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as { id: string; brokers: string };
  } catch {
    return undefined;
  }
}
