/**
 * An in-memory model of Kafka transactions for unit and property tests: topics as logs, one
 * transaction per transactional id, an epoch per id that every init bumps (aborting what that id
 * left open and fencing its earlier holders), and `read_committed` reads. At an operation of the
 * test's choosing, the drivers of one factory (one process) can be killed (kill -9: everything
 * after hangs, nothing more takes effect), or the operation can fail transiently (as during a
 * broker restart), before it takes effect or after (its answer lost: a commit that landed).
 */
import { KafkaKlineSinkError } from '../src/kafka/kafka-kline-sink-error.js';
import type { KafkaTopicSpec } from '../src/kafka/kafka-producer-driver.js';
import type {
  KafkaCommittedRecord,
  KafkaTransactionalDriver,
  KafkaTransactionalDriverOptions,
} from '../src/kafka/kafka-transactional-driver.js';
import type { KafkaMessage } from '../src/kafka/to-kafka-message.js';

interface StoredRecord {
  readonly key: string;
  readonly value: string;
  readonly offset: bigint;
  /** The transaction (id:number) it belongs to; `undefined` when produced outside one. */
  readonly txn: string | undefined;
}

/** A broker-side error as kafkajs reports it (its `type` is what the sink inspects). */
export class FakeBrokerError extends Error {
  constructor(readonly type: string) {
    super(`fake broker: ${type}`);
  }
}

export class FakeKafkaCluster {
  readonly #logs = new Map<string, StoredRecord[]>();
  readonly #txnState = new Map<string, 'open' | 'committed' | 'aborted'>();
  readonly #epochs = new Map<string, number>();
  readonly #openTxn = new Map<string, string>();
  readonly createdTopics: KafkaTopicSpec[] = [];
  #txnSeq = 0;

  /**
   * A driver factory for `KafkaKlineSink.open({ driver })`, standing for one process: `hooks`
   * script its fate, and its drivers (the sink makes a new one to redo a transaction) count their
   * operations together and die together.
   */
  factory(hooks: FakeDriverHooks = {}): (o: KafkaTransactionalDriverOptions) => FakeTransactionalDriver {
    const process: FakeProcess = { operations: 0, killed: false, drivers: 0 };
    return (o) => new FakeTransactionalDriver(this, o, hooks, process);
  }

  /** InitProducerId: bumps the id's epoch, aborting its open transaction. */
  init(transactionalId: string): number {
    const epoch = (this.#epochs.get(transactionalId) ?? -1) + 1;
    this.#epochs.set(transactionalId, epoch);
    const open = this.#openTxn.get(transactionalId);
    if (open !== undefined) this.#txnState.set(open, 'aborted');
    this.#openTxn.delete(transactionalId);
    return epoch;
  }

  append(messages: readonly KafkaMessage[], producer?: { id: string; epoch: number }): void {
    let txn: string | undefined;
    if (producer !== undefined) {
      this.#checkEpoch(producer);
      txn = this.#openTxn.get(producer.id);
      if (txn === undefined) {
        txn = `${producer.id}:${++this.#txnSeq}`;
        this.#openTxn.set(producer.id, txn);
        this.#txnState.set(txn, 'open');
      }
    }
    for (const m of messages) {
      const log = this.#logs.get(m.topic) ?? [];
      this.#logs.set(m.topic, log);
      log.push({ key: m.key, value: m.value.toString(), offset: BigInt(log.length), txn });
    }
  }

  end(producer: { id: string; epoch: number }, commit: boolean): void {
    this.#checkEpoch(producer);
    const txn = this.#openTxn.get(producer.id);
    if (txn === undefined) return;
    this.#txnState.set(txn, commit ? 'committed' : 'aborted');
    this.#openTxn.delete(producer.id);
  }

  /** Whether a transaction holds records of `topic` open (its last stable offset lags). */
  hasOpenTransaction(topic: string): boolean {
    return (this.#logs.get(topic) ?? []).some(
      (r) => r.txn !== undefined && this.#txnState.get(r.txn) === 'open',
    );
  }

  /** What a `read_committed` consumer of `topic` sees now (up to the first open transaction). */
  readCommitted(topic: string): KafkaCommittedRecord[] {
    const out: KafkaCommittedRecord[] = [];
    for (const r of this.#logs.get(topic) ?? []) {
      const state = r.txn === undefined ? 'committed' : this.#txnState.get(r.txn);
      if (state === 'open') break;
      if (state === 'committed') out.push({ partition: 0, offset: r.offset, key: r.key, value: r.value });
    }
    return out;
  }

  /** Every record ever appended to `topic`, aborted and open ones too. */
  all(topic: string): readonly StoredRecord[] {
    return this.#logs.get(topic) ?? [];
  }

  #checkEpoch(producer: { id: string; epoch: number }): void {
    if (this.#epochs.get(producer.id) !== producer.epoch) throw new FakeBrokerError('INVALID_PRODUCER_EPOCH');
  }
}

/** What a test's hook makes of one driver operation (see {@link FakeDriverHooks}). */
export type FakeVerdict = 'kill' | 'kill-after' | 'fail' | 'fail-after' | Promise<void> | undefined;

/** How a test scripts the drivers of a fake process. */
export interface FakeDriverHooks {
  /**
   * Called before each operation takes effect, with its name and a running count over the
   * process's drivers (from 1): `'kill'` kills the process before the operation (it never reaches
   * the broker), `'kill-after'` lets it take effect and then kills (its answer is lost); `'fail'`
   * rejects it with a transient broker error without effect, `'fail-after'` lets it take effect
   * and then rejects it so (a commit that landed, whose answer was lost); a promise delays it.
   */
  readonly onOperation?: (op: string, n: number) => FakeVerdict;
  /** Called once the process is killed. */
  readonly onKilled?: () => void;
}

/** What the drivers of one factory share: one process's operation count and fate. */
interface FakeProcess {
  operations: number;
  killed: boolean;
  /** Drivers made so far. */
  drivers: number;
}

/** The transient error of a failed operation: what a restarting broker answers, kafkajs-style. */
function transientError(op: string): FakeBrokerError {
  return new FakeBrokerError(op === 'send' ? 'NOT_LEADER_OR_FOLLOWER' : 'COORDINATOR_NOT_AVAILABLE');
}

const never = new Promise<never>(() => undefined);

export class FakeTransactionalDriver implements KafkaTransactionalDriver {
  readonly name = 'fake';
  readonly #producer: { id: string; epoch: number } | undefined;
  readonly #process: FakeProcess;
  #inTransaction = false;
  closed = false;

  constructor(
    readonly cluster: FakeKafkaCluster,
    readonly options: KafkaTransactionalDriverOptions,
    readonly hooks: FakeDriverHooks,
    process: FakeProcess = { operations: 0, killed: false, drivers: 0 },
  ) {
    this.#process = process;
    process.drivers++;
    this.#producer =
      options.transactionalId === undefined ? undefined : { id: options.transactionalId, epoch: -1 };
  }

  /** Whether its process was killed. */
  get killed(): boolean {
    return this.#process.killed;
  }

  connect(): Promise<void> {
    return this.#run('connect', () => {
      if (this.#producer !== undefined) this.#producer.epoch = this.cluster.init(this.#producer.id);
    });
  }

  ensureTopics(topics: readonly KafkaTopicSpec[]): Promise<void> {
    return this.#run('ensureTopics', () => void this.cluster.createdTopics.push(...topics));
  }

  begin(): Promise<void> {
    return this.#run('begin', () => {
      if (this.#producer === undefined) throw new Error('fake: begin() without a transactionalId');
      this.#inTransaction = true;
    });
  }

  send(messages: readonly KafkaMessage[]): Promise<void> {
    return this.#run('send', () =>
      this.cluster.append(messages, this.#inTransaction ? this.#producer : undefined),
    );
  }

  commit(): Promise<void> {
    return this.#run('commit', () => this.#end(true));
  }

  abort(): Promise<void> {
    return this.#run('abort', () => this.#end(false));
  }

  fence(transactionalIds: readonly string[]): Promise<void> {
    return this.#run('fence', () => {
      for (const id of transactionalIds) this.cluster.init(id);
    });
  }

  readCommitted(topic: string): Promise<KafkaCommittedRecord[]> {
    return this.#run('readCommitted', () => {
      if (this.cluster.hasOpenTransaction(topic))
        throw new KafkaKlineSinkError('QF_KAFKA_WATERMARKS', `fake: ${topic} holds an open transaction`, {
          retryable: true,
        });
      return this.cluster.readCommitted(topic);
    }).catch((err: unknown) => {
      // As the real drivers' reads do: a broker's failure is a retryable QF_KAFKA_WATERMARKS.
      if (!(err instanceof FakeBrokerError)) throw err;
      throw new KafkaKlineSinkError('QF_KAFKA_WATERMARKS', `fake: could not read ${topic}: ${err.message}`, {
        retryable: true,
        cause: err,
      });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** kill -9: nothing a driver of its process does from now on takes effect or settles. */
  kill(): void {
    if (this.#process.killed) return;
    this.#process.killed = true;
    this.hooks.onKilled?.();
  }

  #end(commit: boolean): void {
    if (this.#producer === undefined) throw new Error('fake: commit/abort without a transactionalId');
    this.#inTransaction = false;
    this.cluster.end(this.#producer, commit);
  }

  async #run<T>(op: string, effect: () => T): Promise<T> {
    if (this.killed) return never;
    await Promise.resolve();
    const verdict = this.hooks.onOperation?.(op, ++this.#process.operations);
    if (verdict === 'kill') this.kill();
    else if (verdict === 'fail') throw transientError(op);
    else if (verdict instanceof Promise) await verdict;
    if (this.killed) return never;
    const result = effect();
    if (verdict === 'kill-after') this.kill();
    if (this.killed) return never;
    await Promise.resolve();
    if (verdict === 'fail-after') throw transientError(op);
    return result;
  }
}
