/**
 * The Kafka broker in a container (the `containers` test engine): the quoteflow-test-kafka image
 * (scripts/containers/setup.sh) started by testcontainers, single-node KRaft, published on a fixed
 * free port of 127.0.0.1 that it also advertises, so a stop and a start by container id keep the
 * bootstrap address, the topics and the offsets (the container's file system survives a stop).
 * Its secured listeners (SASL_SSL, MTLS, WRONGNAME: scripts/kafka/broker-security.properties) are
 * published and advertised the same way; their key material, made on the host by
 * scripts/kafka/tls.sh, is copied in when the container is created.
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
import { ensureKafkaTls, type SecureListeners } from './kafka-listeners.js';
import { KAFKA_IMAGE } from './test-engine.js';

/** What the broker logs once it serves (as scripts/kafka/broker.sh waits for). */
const STARTED = 'Kafka Server started';

/** One broker container: its bootstrap address and its life cycle by id. */
export interface KafkaContainer {
  readonly id: string;
  /** `127.0.0.1:PORT`. */
  readonly brokers: string;
  /** The secured listeners' addresses and the key material's directory on the host. */
  readonly listeners: SecureListeners;
  /** Stops it (SIGTERM, then SIGKILL after 60 s); it keeps its port and data. */
  stop(): Promise<void>;
  /** Starts it again and waits until it serves. */
  start(): Promise<void>;
  /** Removes it with its data. */
  remove(): Promise<void>;
}

/** Starts a broker container named `quoteflow-test-kafka-<what>-…`, owned by `ownerPid`. */
export async function startKafkaContainer(what: string, ownerPid = process.pid): Promise<KafkaContainer> {
  const tlsDir = await ensureKafkaTls();
  const ports: number[] = [];
  while (ports.length < 4) {
    const p = await freePort();
    if (!ports.includes(p)) ports.push(p);
  }
  const [port, sasl, mtls, wrong] = ports as [number, number, number, number];
  const started = await testContainer(KAFKA_IMAGE, containerName(`kafka-${what}`), ownerPid)
    .withLoopbackPort(9092, port)
    .withLoopbackPort(9095, sasl)
    .withLoopbackPort(9096, mtls)
    .withLoopbackPort(9097, wrong)
    .withEnvironment({
      KAFKA_ADVERTISED_PORT: String(port),
      KAFKA_SASL_SSL_PORT: String(sasl),
      KAFKA_MTLS_PORT: String(mtls),
      KAFKA_WRONGNAME_PORT: String(wrong),
    })
    .withCopyFilesToContainer(
      ['ca.pem', 'broker.pem', 'wrongname.pem'].map((f) => ({
        source: join(tlsDir, f),
        target: `/opt/kafka/tls/${f}`,
      })),
    )
    .withWaitStrategy(Wait.forLogMessage(STARTED))
    .withStartupTimeout(180_000)
    .start();
  const listeners: SecureListeners = {
    saslSsl: `127.0.0.1:${sasl}`,
    mtls: `127.0.0.1:${mtls}`,
    wrongName: `127.0.0.1:${wrong}`,
    tlsDir,
  };
  return kafkaContainer(started.getId(), `127.0.0.1:${port}`, listeners);
}

function kafkaContainer(id: string, brokers: string, listeners: SecureListeners): KafkaContainer {
  return {
    id,
    brokers,
    listeners,
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
export async function runKafkaContainer(dir: string, ownerPid: number): Promise<ContainerRecord> {
  const record = join(dir, 'container.json');
  const lock = join(dir, 'lock');
  await mkdir(dir, { recursive: true });
  const deadline = Date.now() + 300_000;
  for (;;) {
    const known = await readRecord(record);
    if (known !== undefined) return known;
    try {
      await mkdir(lock);
    } catch {
      if (Date.now() > deadline) throw new Error(`no broker container recorded in ${record} within 300 s`);
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    try {
      const again = await readRecord(record);
      if (again !== undefined) return again;
      const broker = await startKafkaContainer('run', ownerPid);
      const written: ContainerRecord = {
        id: broker.id,
        brokers: broker.brokers,
        listeners: broker.listeners,
      };
      await writeFile(`${record}.tmp`, JSON.stringify(written));
      await rename(`${record}.tmp`, record);
      return written;
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

/** What `dir/container.json` holds about the run's broker container. */
export interface ContainerRecord {
  readonly id: string;
  readonly brokers: string;
  readonly listeners: SecureListeners;
}

async function readRecord(path: string): Promise<ContainerRecord | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as ContainerRecord;
  } catch {
    return undefined;
  }
}
