/**
 * One Avro schema per topic kind, field for field the contract's JSON value of that dataset
 * (`shared/spec/contract.md`, "Kafka"; `to-kafka-message.ts` makes the values): the same names,
 * times as the same ISO-8601 UTC strings, `seq` as the same decimal string (exact: 64 bits never
 * wrap), nullable fields as `["null", T]` unions with default `null`, so a later version may add a
 * field (with a default) under the registry's BACKWARD rule.
 */
import { SUSPENSION_RAW_COLUMNS } from '../../files/dataset-columns.js';
import type { KafkaTopicKind } from '../to-kafka-message.js';

/** An Avro record schema (the subset quoteflow writes). */
export interface AvroRecordSchema {
  /** Always `record`. */
  readonly type: 'record';
  /** The record's name (`Kline`, `Depth`, `Suspension`). */
  readonly name: string;
  /** `io.quoteflow` for quoteflow's. */
  readonly namespace?: string;
  /** What the record is. */
  readonly doc?: string;
  /** In the JSON value's order. */
  readonly fields: readonly AvroField[];
}

/** One field of an {@link AvroRecordSchema}. */
export interface AvroField {
  /** The JSON value's key. */
  readonly name: string;
  /** An Avro type: `'string'`, `['null', 'double']`, a record, an array… */
  readonly type: unknown;
  /** What the field holds. */
  readonly doc?: string;
  /** The value a reader gives a record written without the field (`null` for every nullable one). */
  readonly default?: unknown;
}

const NAMESPACE = 'io.quoteflow';
const nullable = (name: string, type: unknown, doc?: string): AvroField => ({
  name,
  type: ['null', type],
  default: null,
  ...(doc === undefined ? {} : { doc }),
});

/** `P.kline`: one bar, closed (`final: true`) or still forming. */
export const KLINE_AVRO_SCHEMA: AvroRecordSchema = {
  type: 'record',
  name: 'Kline',
  namespace: NAMESPACE,
  doc: 'A K-line bar (quoteflow contract, Kafka topic P.kline)',
  fields: [
    { name: 'code', type: 'string' },
    { name: 'kline_type', type: 'int' },
    { name: 'ts', type: 'string', doc: 'bar start, ISO-8601 UTC' },
    { name: 'open', type: 'double' },
    { name: 'high', type: 'double' },
    { name: 'low', type: 'double' },
    { name: 'close', type: 'double' },
    nullable('volume', 'double'),
    nullable('turnover', 'double'),
    {
      name: 'read_at',
      type: 'string',
      doc: 'when the request that read these values was sent, ISO-8601 UTC',
    },
    { name: 'final', type: 'boolean', doc: 'false while the bar is still forming' },
  ],
};

const LEVEL = {
  type: 'record',
  name: 'Level',
  fields: [{ name: 'price', type: 'double' }, nullable('volume', 'double')],
};

/** `P.depth`: one order book snapshot; a side may be empty. */
export const DEPTH_AVRO_SCHEMA: AvroRecordSchema = {
  type: 'record',
  name: 'Depth',
  namespace: NAMESPACE,
  doc: 'An order book snapshot (quoteflow contract, Kafka topic P.depth)',
  fields: [
    { name: 'code', type: 'string' },
    nullable('seq', 'string', 'the 64-bit sequence number as a decimal string (exact)'),
    nullable('tick_time', 'string', 'ISO-8601 UTC'),
    { name: 'bids', type: { type: 'array', items: LEVEL } },
    { name: 'asks', type: { type: 'array', items: 'Level' } },
  ],
};

/** `P.suspension`: a trading halt, typed columns first, then every raw field. */
export const SUSPENSION_AVRO_SCHEMA: AvroRecordSchema = {
  type: 'record',
  name: 'Suspension',
  namespace: NAMESPACE,
  doc: 'A trading suspension (quoteflow contract, Kafka topic P.suspension)',
  fields: [
    { name: 'exchange', type: 'string' },
    { name: 'symbol', type: 'string' },
    nullable('symbol_name', 'string'),
    nullable('halt_at', 'string', 'ISO-8601 UTC'),
    nullable('resume_at', 'string', 'ISO-8601 UTC'),
    { name: 'publish_date', type: 'string', doc: 'ISO-8601 UTC' },
    nullable('halt_reason', 'string'),
    ...SUSPENSION_RAW_COLUMNS.map(([, name]) => nullable(name, 'string')),
  ],
};

/** The schema of each topic kind. */
export const AVRO_SCHEMAS: Readonly<Record<KafkaTopicKind, AvroRecordSchema>> = {
  kline: KLINE_AVRO_SCHEMA,
  depth: DEPTH_AVRO_SCHEMA,
  suspension: SUSPENSION_AVRO_SCHEMA,
};
