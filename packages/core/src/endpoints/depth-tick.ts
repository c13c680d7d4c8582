import { z } from 'zod';
import type { DepthTick, Level } from '../domain.js';
import { FAMILY_PREFIX, type Family } from '../markets.js';
import { parseBigInt, parseDecimal, parseEpochMs } from '../internal/parse-decimal.js';
import { DecodeError } from '../errors.js';
import { type RequestSpec } from './request-spec.js';
import { checkCodeList } from '../internal/check-code-list.js';
import { decodeErrorFromZod } from './ret-envelope.js';

/** Builds the `GET {family}/depth-tick` request for at most `maxCodes` codes. */
export function buildDepthTickRequest(
  codes: readonly string[],
  family: Family,
  trace: string,
  maxCodes: number,
): RequestSpec {
  checkCodeList(codes, maxCodes, 'depth');
  const query = { trace, data: { symbol_list: codes.map((code) => ({ code })) } };
  return {
    endpoint: 'depth-tick',
    method: 'GET',
    path: `${FAMILY_PREFIX[family]}/depth-tick`,
    query: { query: JSON.stringify(query) },
    body: undefined,
    trace,
    asked: [...codes],
  };
}

const LevelSchema = z.object({
  price: z.string(),
  // Some CFD indices provide no volume (spec: Depth tick).
  volume: z.string().nullish(),
});

/** `data` of a `/depth-tick` response; every tick field is optional on the wire (spec). */
export const DepthTickDataSchema = z.object({
  tick_list: z.array(
    z.object({
      code: z.string().optional(),
      seq: z.string().nullish(),
      tick_time: z.string().nullish(),
      bids: z.array(LevelSchema).nullish(),
      asks: z.array(LevelSchema).nullish(),
    }),
  ),
});

type LevelWire = z.infer<typeof LevelSchema>;

function toLevels(levels: readonly LevelWire[] | null | undefined, path: string): Level[] {
  if (levels == null) return [];
  return levels.map((l, j) => {
    const volumeRaw = l.volume == null || l.volume === '' ? undefined : l.volume;
    return {
      price: parseDecimal(l.price, 'depth-tick', () => `${path}[${j}].price`),
      volume:
        volumeRaw === undefined
          ? undefined
          : parseDecimal(volumeRaw, 'depth-tick', () => `${path}[${j}].volume`),
      priceRaw: l.price,
      volumeRaw,
    };
  });
}

/** Decodes `data` of a `/depth-tick` response: `seq` as bigint, `tick_time` as epoch ms, empty sides as `[]`. */
export function decodeDepthTickData(data: unknown): DepthTick[] {
  const parsed = DepthTickDataSchema.safeParse(data);
  if (!parsed.success) throw decodeErrorFromZod('depth-tick', parsed.error);
  return parsed.data.tick_list.map((t, i) => {
    const at = `data.tick_list[${i}]`;
    // A tick that names no product cannot be attributed: refuse it rather than guess.
    if (t.code === undefined || t.code === '')
      throw new DecodeError('depth-tick', `${at}.code`, 'a tick without a code');
    return {
      type: 'depth',
      code: t.code,
      seq: t.seq == null || t.seq === '' ? undefined : parseBigInt(t.seq, 'depth-tick', () => `${at}.seq`),
      tickTimeMs:
        t.tick_time == null || t.tick_time === ''
          ? undefined
          : parseEpochMs(t.tick_time, 'depth-tick', () => `${at}.tick_time`),
      bids: toLevels(t.bids, `${at}.bids`),
      asks: toLevels(t.asks, `${at}.asks`),
    } satisfies DepthTick;
  });
}
