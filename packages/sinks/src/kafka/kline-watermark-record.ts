/**
 * The records of the K-line sink's watermark topic (`<prefix>.kline.watermarks`, compacted): key =
 * core's `seriesKey` (`CODE|K`), value = what the series' committed bars cover, cumulative over
 * every commit, so that compaction keeping the newest record per key keeps the whole truth.
 */
import { z } from 'zod';
import type { SeriesWatermark } from '../files/dataset-log-format.js';
import { checkFormatVersion, FormatVersionError, QUOTEFLOW_FORMAT_VERSION } from '../format-version.js';
import type { KafkaCommittedRecord } from './kafka-transactional-driver.js';
import { KafkaKlineSinkError } from './kafka-kline-sink-error.js';
import type { KafkaMessage } from './to-kafka-message.js';

/** The JSON value of a watermark record. */
export interface KlineWatermarkValue {
  /** The record's key again: `CODE|K`. */
  readonly series: string;
  readonly code: string;
  readonly kline_type: number;
  /** Start of the oldest committed bar, epoch ms UTC. */
  readonly first: number;
  /** Start of the newest committed bar, epoch ms UTC. */
  readonly last: number;
  /** Final bars committed for the series (every commit together). */
  readonly rows: number;
  /** `first` and `last` as ISO-8601 UTC, for people reading the topic. */
  readonly first_ts: string;
  readonly last_ts: string;
  /** The transactional id of the sink that committed this record. */
  readonly transactional_id: string | null;
  /** When the checkpoint began its commit (the sink's wall clock), ISO-8601 UTC. */
  readonly committed_at: string;
  /** The quoteflow format version of the record (`QUOTEFLOW_FORMAT_VERSION`; records without one are version 1). */
  readonly format_version: number;
}

const WatermarkValueSchema = z.looseObject({
  first: z.number().int(),
  last: z.number().int(),
  rows: z.number().int().nonnegative(),
  transactional_id: z.string().nullable().optional(),
});

/** A series' newest watermark record: the watermark, and who committed it. */
export interface CommittedWatermark {
  readonly watermark: SeriesWatermark;
  /** The committing sink's transactional id (`undefined`: none recorded). */
  readonly transactionalId: string | undefined;
}

/** The watermark message of one series. */
export function klineWatermarkMessage(
  topic: string,
  series: string,
  watermark: SeriesWatermark,
  transactionalId: string | undefined,
  committedAtMs: number,
): KafkaMessage {
  const bar = series.lastIndexOf('|');
  const value: KlineWatermarkValue = {
    series,
    code: series.slice(0, bar),
    kline_type: Number(series.slice(bar + 1)),
    first: watermark.first,
    last: watermark.last,
    rows: watermark.rows,
    first_ts: new Date(watermark.first).toISOString(),
    last_ts: new Date(watermark.last).toISOString(),
    transactional_id: transactionalId ?? null,
    committed_at: new Date(committedAtMs).toISOString(),
    format_version: QUOTEFLOW_FORMAT_VERSION,
  };
  return { topic, key: series, value: JSON.stringify(value) };
}

/**
 * The watermarks a topic's committed records hold: per key the newest record, a tombstone
 * deleting it. A record that is not a watermark is `QF_KAFKA_WATERMARKS` (naming where it is).
 */
export function klineWatermarksOf(
  topic: string,
  records: readonly KafkaCommittedRecord[],
): Map<string, SeriesWatermark> {
  return new Map([...klineWatermarkCommitsOf(topic, records)].map(([key, c]) => [key, c.watermark]));
}

/** {@link klineWatermarksOf}, with the transactional id each newest record was committed with. */
export function klineWatermarkCommitsOf(
  topic: string,
  records: readonly KafkaCommittedRecord[],
): Map<string, CommittedWatermark> {
  const out = new Map<string, CommittedWatermark>();
  for (const r of records) {
    if (r.value === undefined) {
      out.delete(r.key);
      continue;
    }
    const where = `kafka: ${topic} partition ${r.partition} offset ${r.offset} (key ${JSON.stringify(r.key)})`;
    let parsed: z.infer<typeof WatermarkValueSchema>;
    try {
      const json = JSON.parse(r.value) as unknown;
      // A newer format is refused as such, before its shape is judged by this release's schema.
      if (typeof json === 'object' && json !== null && 'format_version' in json)
        checkFormatVersion(where, json.format_version);
      parsed = WatermarkValueSchema.parse(json);
    } catch (err) {
      if (err instanceof FormatVersionError) throw err;
      throw new KafkaKlineSinkError(
        'QF_KAFKA_WATERMARKS',
        `${where} is not a K-line watermark: ${JSON.stringify(r.value.slice(0, 200))}`,
        { cause: err },
      );
    }
    out.set(r.key, {
      watermark: { first: parsed.first, last: parsed.last, rows: parsed.rows },
      transactionalId: parsed.transactional_id ?? undefined,
    });
  }
  return out;
}
