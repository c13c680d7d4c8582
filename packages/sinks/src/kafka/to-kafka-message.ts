/**
 * THE mapping from core's domain records to Kafka messages (`shared/spec/contract.md`, "Kafka"):
 * topic `P.kline`, `P.depth` or `P.suspension`, the product code as key (the symbol for
 * suspensions), and a JSON value with the dataset's column names plus its partition keys.
 */
import type { Bar, BarUpdate, DepthTick, Level, SuspensionRecord } from '@quoteflow/core';
// The raw suspension fields and their column names are the datasets' (one mapping for both).
import { SUSPENSION_RAW_COLUMNS } from '../files/dataset-columns.js';

/** The three topic kinds; the topic is `<prefix>.<kind>`. */
export const KAFKA_TOPIC_KINDS = ['kline', 'depth', 'suspension'] as const;
export type KafkaTopicKind = (typeof KAFKA_TOPIC_KINDS)[number];

/** What the Kafka sink produces. A `Bar` (closed, from history) goes out as a final kline. */
export type KafkaRecord = Bar | BarUpdate | DepthTick | SuspensionRecord;

/**
 * One message as the producer drivers send it: a UTF-8 key; the value as the sink's
 * {@link KafkaValueSerializer} made it (JSON text by default, bytes for Avro).
 */
export interface KafkaMessage {
  readonly topic: string;
  readonly key: string;
  readonly value: string | Buffer;
}

/** A message value before serialisation: the contract's JSON shape of its dataset. */
export type KafkaMessageValue = KlineMessageValue | DepthMessageValue | SuspensionMessageValue;

/**
 * Turns a message value into the bytes (or text) the record carries. The default,
 * {@link JSON_VALUE_SERIALIZER}, writes the contract's JSON; `SchemaRegistrySerializer` writes Avro
 * in the Confluent wire format. Synchronous: anything that needs a request (registering schemas)
 * happens before the sink opens.
 */
export interface KafkaValueSerializer {
  /** `json`, `avro`, …: for logs and errors. */
  readonly format: string;
  /** The value of a record of `kind` going to `topic`; throws when it cannot (unknown topic). */
  serialize(topic: string, kind: KafkaTopicKind, value: KafkaMessageValue): string | Buffer;
}

/** The default values: the contract's JSON text. */
export const JSON_VALUE_SERIALIZER: KafkaValueSerializer = {
  format: 'json',
  serialize: (_topic, _kind, value) => JSON.stringify(value),
};

/** The default topic prefix (`--topic-prefix`). */
export const DEFAULT_TOPIC_PREFIX = 'quoteflow';

/** The value of a `P.kline` message. */
export interface KlineMessageValue {
  readonly code: string;
  readonly kline_type: number;
  /** Bar start, ISO-8601 UTC. */
  readonly ts: string;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly volume: number | null;
  readonly turnover: number | null;
  /**
   * When the request that returned these values was sent (core's `readAtMs`), ISO-8601 UTC: a
   * bar whose period had ended by then was read after it closed.
   */
  readonly read_at: string;
  /** `false` while the bar is still forming. */
  readonly final: boolean;
}

/** One order book level of a `P.depth` message. */
export interface LevelMessageValue {
  readonly price: number;
  readonly volume: number | null;
}

/** The value of a `P.depth` message. */
export interface DepthMessageValue {
  readonly code: string;
  /** The 64-bit sequence number as a decimal string. */
  readonly seq: string | null;
  readonly tick_time: string | null;
  readonly bids: readonly LevelMessageValue[];
  readonly asks: readonly LevelMessageValue[];
}

/** The value of a `P.suspension` message: typed columns first, then every raw field (`raw_…`, as in the dataset). */
export type SuspensionMessageValue = {
  readonly exchange: string;
  readonly symbol: string;
  readonly symbol_name: string | null;
  readonly halt_at: string | null;
  readonly resume_at: string | null;
  readonly publish_date: string;
  readonly halt_reason: string | null;
} & { readonly [K in (typeof SUSPENSION_RAW_COLUMNS)[number][1]]: string | null };

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | undefined): string | null => (ms === undefined ? null : iso(ms));
const level = (l: Level): LevelMessageValue => ({ price: l.price, volume: l.volume ?? null });

/** The topic kind a record goes to. */
export function kafkaTopicKindOf(record: KafkaRecord): KafkaTopicKind {
  switch (record.type) {
    case 'bar':
    case 'bar-update':
      return 'kline';
    case 'depth':
      return 'depth';
    case 'suspension':
      return 'suspension';
  }
}

/** The message key: the product code, or the symbol for suspensions. */
export function kafkaKeyOf(record: KafkaRecord): string {
  return record.type === 'suspension' ? record.symbol : record.code;
}

/** The JSON value of a kline message. */
export function klineMessageValue(bar: Bar | BarUpdate): KlineMessageValue {
  return {
    code: bar.code,
    kline_type: bar.klineType,
    ts: iso(bar.tsMs),
    open: bar.open,
    high: bar.high,
    low: bar.low,
    close: bar.close,
    volume: bar.volume,
    turnover: bar.turnover,
    read_at: iso(bar.readAtMs),
    final: bar.type === 'bar' ? true : bar.final,
  };
}

/** The JSON value of a depth message. */
export function depthMessageValue(tick: DepthTick): DepthMessageValue {
  return {
    code: tick.code,
    seq: tick.seq === undefined ? null : tick.seq.toString(),
    tick_time: isoOrNull(tick.tickTimeMs),
    bids: tick.bids.map(level),
    asks: tick.asks.map(level),
  };
}

/** The JSON value of a suspension message. */
export function suspensionMessageValue(r: SuspensionRecord): SuspensionMessageValue {
  const value: Record<string, string | null> = {
    exchange: r.exchange,
    symbol: r.symbol,
    symbol_name: r.symbolName ?? null,
    halt_at: isoOrNull(r.haltAtMs),
    resume_at: isoOrNull(r.resumeAtMs),
    publish_date: iso(r.publishAtMs),
    halt_reason: r.haltReason ?? null,
  };
  for (const [field, name] of SUSPENSION_RAW_COLUMNS) value[name] = r[field] ?? null;
  return value as SuspensionMessageValue;
}

/** The JSON value of any record (not yet serialised). */
export function kafkaMessageValue(record: KafkaRecord): KafkaMessageValue {
  switch (record.type) {
    case 'bar':
    case 'bar-update':
      return klineMessageValue(record);
    case 'depth':
      return depthMessageValue(record);
    case 'suspension':
      return suspensionMessageValue(record);
  }
}

/**
 * Maps a domain record to its Kafka message: topic `<topicPrefix>.<kind>`, key = product code
 * (symbol for suspensions), value = the contract's JSON (or what `serializer` makes of it).
 *
 * @param record - a bar, bar update, depth tick or suspension record
 * @param topicPrefix - the topic prefix
 * @param serializer - how the value is written
 * @defaultValue topicPrefix `'quoteflow'`, serializer {@link JSON_VALUE_SERIALIZER}
 * @example
 * ```ts
 * const msg = toKafkaMessage(tick, 'md'); // { topic: 'md.depth', key: 'AAPL.US', value: '{"code":…}' }
 * ```
 */
export function toKafkaMessage(
  record: KafkaRecord,
  topicPrefix: string = DEFAULT_TOPIC_PREFIX,
  serializer: KafkaValueSerializer = JSON_VALUE_SERIALIZER,
): KafkaMessage {
  const kind = kafkaTopicKindOf(record);
  const topic = `${topicPrefix}.${kind}`;
  return {
    topic,
    key: kafkaKeyOf(record),
    value: serializer.serialize(topic, kind, kafkaMessageValue(record)),
  };
}
