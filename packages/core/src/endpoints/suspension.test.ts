import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DecodeError, HttpStatusError, ServiceError } from '../errors.js';
import { buildSuspensionRequest, decodeSuspensionResponse } from './suspension.js';

const fixture = (name: string) =>
  readFileSync(new URL(`../../../../test/fixtures/suspension/${name}`, import.meta.url), 'utf8');

describe('suspension', () => {
  it('builds a plain GET without trace or query JSON', () => {
    expect(buildSuspensionRequest({ exchange: 'nyse' })).toMatchObject({
      path: '/api/suspension/nyse',
      query: {},
      trace: undefined,
    });
    expect(() => buildSuspensionRequest({ exchange: 'lse' as never })).toThrow(/sse, nyse, nasdaq/);
  });

  it('turns nulls and empty strings into undefined and reads wall clocks in Shanghai time', () => {
    const [a, b] = decodeSuspensionResponse('sse', 200, fixture('sse.json'));
    expect(a).toMatchObject({
      symbol: '600416',
      resumeDate: undefined,
      resumeTime: undefined,
      haltPeriod: '全天',
      resumeAtMs: undefined,
    });
    // 2026-11-20 09:30:00 in Asia/Shanghai (UTC+8) is 01:30 UTC.
    expect(a!.haltAtMs).toBe(Date.UTC(2026, 10, 20, 1, 30));
    expect(a!.publishAtMs).toBe(Date.UTC(2026, 10, 19, 10, 30));
    expect(b).toMatchObject({ symbolName: undefined, haltReason: undefined, haltPeriod: undefined });
    // haltTime carries a full date-time here; resume from date + time.
    expect(b!.haltAtMs).toBe(Date.UTC(2026, 10, 18, 1, 30));
    expect(b!.resumeAtMs).toBe(Date.UTC(2026, 10, 19, 1, 30));
  });

  it('reads New York wall clocks with daylight saving (EST in November, EDT in July)', () => {
    const [nyse] = decodeSuspensionResponse('nyse', 200, fixture('nyse.json'));
    expect(nyse!.haltAtMs).toBe(Date.UTC(2026, 10, 20, 15, 15));
    expect(nyse!.resumeAtMs).toBe(Date.UTC(2026, 10, 20, 16, 0));
    const [nasdaq] = decodeSuspensionResponse('nasdaq', 200, fixture('nasdaq.json'));
    expect(nasdaq).toMatchObject({
      haltTime: undefined,
      pauseThresholdPrice: '12.34',
      resumeAtMs: undefined,
    });
    expect(nasdaq!.haltAtMs).toBe(Date.UTC(2026, 6, 1, 13, 45, 12));
  });

  it('interprets HTTP 500 {success:false,error} as a retryable service refusal', () => {
    const err = (() => {
      try {
        decodeSuspensionResponse('sse', 500, fixture('error-500.json'));
      } catch (e) {
        return e as ServiceError;
      }
    })();
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({
      code: 'QF_SERVICE',
      msg: 'internal error, please retry later',
      status: 500,
      retryable: true,
    });
  });

  it.each([
    ['token invalid', 'QF_UNAUTHORIZED_TOKEN', false],
    ['rate limit', 'QF_RATE_LIMITED', true],
  ])('recognises the provider message %j in a suspension error body', (error, code, retryable) => {
    expect(() =>
      decodeSuspensionResponse('nyse', 500, JSON.stringify({ success: false, error })),
    ).toThrowError(
      expect.objectContaining({ code, retryable, msg: error, status: 500, endpoint: 'suspension' }),
    );
  });

  it('reports other failures as HTTP status or decode errors', () => {
    expect(() => decodeSuspensionResponse('sse', 502, '<html>bad gateway</html>')).toThrow(HttpStatusError);
    expect(() =>
      decodeSuspensionResponse(
        'sse',
        200,
        '{"success":true,"timestamp":"x","totalCount":1,"data":[{"symbol":"1","publishDate":"soon"}]}',
      ),
    ).toThrowError(expect.objectContaining({ path: 'data[0].publishDate' }));
    expect(() =>
      decodeSuspensionResponse(
        'sse',
        200,
        '{"success":true,"timestamp":"x","totalCount":1,"data":[{"publishDate":"2026-01-01 00:00:00"}]}',
      ),
    ).toThrow(DecodeError);
  });
});
