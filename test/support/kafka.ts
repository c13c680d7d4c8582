/**
 * Kafka helpers for integration tests: the run's broker, unique topic names, and two independent
 * ways to read a topic back (a kafkajs consumer and kcat).
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import kafkajs from 'kafkajs';
import { inject } from 'vitest';
import { BROKER_SCRIPT, REPO_ROOT } from './kafka-global-setup.js';
import { runKafkaContainer, startKafkaContainer } from './kafka-container.js';
import { hostListeners, type SecureListeners } from './kafka-listeners.js';
import { testEngine } from './test-engine.js';

const run = promisify(execFile);

/** The librdkafka kcat runs on against the secured listeners (scripts/kafka/setup.sh). */
export const LIBRDKAFKA_DIR = join(REPO_ROOT, '.cache', 'kafka', 'librdkafka', '2.16.1');

/** One message as read back from a topic. */
export interface ReadMessage {
  readonly key: string;
  readonly partition: number;
  readonly offset: number;
  readonly value: string;
}

async function startInstance(dir: string, watchPid: number): Promise<string> {
  const { stdout } = await run('bash', [BROKER_SCRIPT, 'start'], {
    env: { ...process.env, KAFKA_INSTANCE_DIR: dir, KAFKA_WATCH_PID: String(watchPid) },
    maxBuffer: 1 << 20,
  });
  const address = stdout.trim().split('\n').pop() ?? '';
  if (!/^127\.0\.0\.1:\d+$/.test(address))
    throw new Error(`broker.sh start printed ${JSON.stringify(stdout)}`);
  return address;
}

/**
 * The bootstrap address of the run's broker: `KAFKA_BROKERS` if set, else the broker of this
 * test run, started on first use (parallel workers share it; the start is serialised by a lock),
 * in a container or on the host as the test engine says (test-engine.ts).
 */
export async function kafkaBrokers(): Promise<string> {
  const external = process.env['KAFKA_BROKERS'];
  if (external) return external;
  const dir = inject('kafkaInstanceDir');
  if (!dir)
    throw new Error(
      'no kafkaInstanceDir provided: is test/support/kafka-global-setup.ts the project globalSetup?',
    );
  if ((await testEngine()) === 'containers')
    return (await runKafkaContainer(dir, inject('kafkaWatchPid'))).brokers;
  return startInstance(dir, inject('kafkaWatchPid'));
}

/**
 * The secured listeners of the run's broker (SASL_SSL, MTLS, WRONGNAME; see kafka-listeners.ts),
 * which `kafkaBrokers()` starts as well. An external cluster (`KAFKA_BROKERS`) has none known here.
 */
export async function kafkaSecureListeners(): Promise<SecureListeners> {
  if (process.env['KAFKA_BROKERS'])
    throw new Error("the secured-listener tests need the run's own broker: unset KAFKA_BROKERS");
  const dir = inject('kafkaInstanceDir');
  if ((await testEngine()) === 'containers')
    return (await runKafkaContainer(dir, inject('kafkaWatchPid'))).listeners;
  await startInstance(dir, inject('kafkaWatchPid'));
  return hostListeners(dir);
}

/** A topic prefix no other test uses: `qft-<name>-<random>`. */
export function uniquePrefix(name: string): string {
  return `qft-${name.replace(/[^A-Za-z0-9_-]/g, '-')}-${randomBytes(4).toString('hex')}`;
}

/**
 * A broker of the test's own (not the run's), which the test may stop and start again: same
 * port and data across restarts. `dispose()` stops it and deletes its data. A container (stopped
 * and started by id) under the `containers` test engine, else a broker.sh instance.
 */
export interface PrivateBroker {
  readonly brokers: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  dispose(): Promise<void>;
}

export async function privateBroker(): Promise<PrivateBroker> {
  if ((await testEngine()) === 'containers') {
    const broker = await startKafkaContainer('private');
    return { brokers: broker.brokers, stop: broker.stop, start: broker.start, dispose: broker.remove };
  }
  return hostPrivateBroker();
}

/** A {@link PrivateBroker} from scripts/kafka/broker.sh on the host, whatever the test engine. */
export async function hostPrivateBroker(): Promise<PrivateBroker> {
  const dir = await mkdtemp(join(REPO_ROOT, '.cache', 'kafka', 'instances', 'private-'));
  const env = { ...process.env, KAFKA_INSTANCE_DIR: dir };
  const brokers = await startInstance(dir, process.pid);
  return {
    brokers,
    stop: async () => {
      await run('bash', [BROKER_SCRIPT, 'stop'], { env });
    },
    start: async () => {
      const again = await startInstance(dir, process.pid);
      if (again !== brokers) throw new Error(`broker came back on ${again}, not ${brokers}`);
    },
    dispose: async () => {
      await run('bash', [BROKER_SCRIPT, 'stop'], { env });
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Reads `expected` messages in all from the beginning of `topics` with one kafkajs consumer (a
 * fresh group), then waits a moment more so that a duplicate would show; rejects after
 * `timeoutMs` with what it had. Per topic, messages are in partition order, offsets ascending.
 */
export async function consumeWithKafkajs(
  brokers: string,
  topics: readonly string[],
  expected: number,
  timeoutMs = 30_000,
): Promise<Map<string, ReadMessage[]>> {
  const kafka = new kafkajs.Kafka({
    clientId: 'qf-test-reader',
    brokers: brokers.split(','),
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const consumer = kafka.consumer({
    groupId: `qft-reader-${randomBytes(4).toString('hex')}`,
    sessionTimeout: 10_000,
    // A fetch that finds nothing new waits this long at the broker, and disconnect() waits for it:
    // short, so reading back ends when the messages are in, not 5 s (kafkajs's default) later.
    maxWaitTimeInMs: 100,
  });
  const got = new Map<string, ReadMessage[]>(topics.map((t) => [t, []]));
  let count = 0;
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [...topics], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `kafkajs consumer read ${count} of ${expected} messages of ${topics.join(', ')} in ${timeoutMs} ms`,
            ),
          ),
        timeoutMs,
      );
      void consumer.run({
        eachMessage: async ({ topic, partition, message }) => {
          got.get(topic)?.push({
            key: message.key?.toString('utf8') ?? '',
            partition,
            offset: Number(message.offset),
            value: message.value?.toString('utf8') ?? '',
          });
          if (++count >= expected) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
    await new Promise((r) => setTimeout(r, 300));
  } finally {
    await consumer.disconnect();
  }
  for (const list of got.values()) sortByPartitionOffset(list);
  return got;
}

/**
 * Reads the whole of `topic` with kcat (librdkafka, an independent client), from the beginning to
 * the end at the time of the call: `kcat -C -b B -t T -f '%k\t%p\t%o\t%s\n' -e`, with
 * `-X isolation.level=…` when `isolation` is given (librdkafka's default is read_committed).
 * `properties` are more `-X KEY=VALUE` (a secured listener's security.protocol, sasl.*, ssl.*);
 * with them kcat runs on the newer librdkafka scripts/kafka/setup.sh keeps (Debian's 2.0.2
 * cannot log in with SCRAM on Kafka 4).
 */
export async function consumeWithKcat(
  brokers: string,
  topic: string,
  timeoutMs = 30_000,
  isolation?: 'read_committed' | 'read_uncommitted',
  properties: Readonly<Record<string, string>> = {},
): Promise<ReadMessage[]> {
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(
      'kcat',
      [
        '-C',
        '-b',
        brokers,
        '-t',
        topic,
        ...(isolation === undefined ? [] : ['-X', `isolation.level=${isolation}`]),
        ...Object.entries(properties).flatMap(([k, v]) => ['-X', `${k}=${v}`]),
        '-f',
        '%k\\t%p\\t%o\\t%s\\n',
        '-e',
        '-q',
        '-o',
        'beginning',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        ...(Object.keys(properties).length === 0
          ? {}
          : { env: { ...process.env, LD_LIBRARY_PATH: LIBRDKAFKA_DIR } }),
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`kcat could not run (scripts/kafka/setup.sh installs it): ${err.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`kcat exited ${code}: ${stderr}`));
    });
  });
  const lines = out.split('\n').filter((l) => l.length > 0);
  return sortByPartitionOffset(
    lines.map((line) => {
      const [key, partition, offset, ...rest] = line.split('\t');
      return { key: key ?? '', partition: Number(partition), offset: Number(offset), value: rest.join('\t') };
    }),
  );
}

/** Partition counts of a topic, by admin metadata. */
export async function partitionCount(brokers: string, topic: string): Promise<number> {
  const kafka = new kafkajs.Kafka({
    clientId: 'qf-test-admin',
    brokers: brokers.split(','),
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    return meta.topics[0]?.partitions.length ?? 0;
  } finally {
    await admin.disconnect();
  }
}

/** The partition the Java client (and kafkajs's default partitioner) puts `key` on. */
export function javaPartitionOf(key: string, partitions: number): number {
  const partitioner = kafkajs.Partitioners.DefaultPartitioner();
  return partitioner({
    topic: 't',
    partitionMetadata: Array.from({ length: partitions }, (_, i) => ({ partitionId: i, leader: 1 })) as never,
    message: { key, value: null },
  });
}

function sortByPartitionOffset(messages: ReadMessage[]): ReadMessage[] {
  return messages.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
}

/** Resolves once `cond()` holds (checked every 20 ms); rejects naming `what` after `timeoutMs`. */
export async function waitUntil(cond: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
