import { describe, expect, it } from 'vitest';
import {
  AbortedError,
  BadRequestError,
  BodyEmptyError,
  BufferOverflowError,
  ClientClosedError,
  DecodeError,
  HttpStatusError,
  InvalidCodeError,
  InvalidOptionError,
  isQuoteflowError,
  MissingItemsError,
  NetworkError,
  UnreachableServiceError,
  QuoteflowError,
  RateLimitedError,
  RequestTimeoutError,
  ServiceError,
  TooManyProductsError,
  UnauthorizedCodeError,
  UnauthorizedTokenError,
} from './errors.js';
import { ERROR_CODES, type ErrorCode } from './error-codes.js';
import { redactToken } from './internal/redact-token.js';

const refusal = {
  endpoint: 'depth-tick',
  ret: 605,
  msg: 'too many requests',
  trace: 'tr-1',
  status: 200,
  codes: ['AAPL.US'],
} as const;

describe('error family', () => {
  it.each([
    [new InvalidOptionError('codes', 'bad'), 'InvalidOptionError', 'QF_INVALID_OPTION', false],
    [new ServiceError({ ...refusal, ret: 606 }), 'ServiceError', 'QF_SERVICE', false],
    [new ServiceError({ ...refusal, ret: undefined, status: 500 }), 'ServiceError', 'QF_SERVICE', true],
    [new RateLimitedError({ ...refusal, ret: 429 }), 'RateLimitedError', 'QF_RATE_LIMITED', true],
    [
      new UnauthorizedTokenError({ ...refusal, ret: 401 }),
      'UnauthorizedTokenError',
      'QF_UNAUTHORIZED_TOKEN',
      false,
    ],
    [new InvalidCodeError({ ...refusal, ret: 600 }), 'InvalidCodeError', 'QF_INVALID_CODE', false],
    [
      new UnauthorizedCodeError({ ...refusal, ret: 604 }),
      'UnauthorizedCodeError',
      'QF_UNAUTHORIZED_CODE',
      false,
    ],
    [new TooManyProductsError(refusal), 'TooManyProductsError', 'QF_TOO_MANY_PRODUCTS', false],
    [new BodyEmptyError({ ...refusal, ret: 601 }), 'BodyEmptyError', 'QF_BODY_EMPTY', false],
    [new BadRequestError({ ...refusal, ret: 400 }), 'BadRequestError', 'QF_BAD_REQUEST', false],
    [new HttpStatusError('kline', 503, ''), 'HttpStatusError', 'QF_HTTP_STATUS', true],
    [new HttpStatusError('kline', 404, 'not found'), 'HttpStatusError', 'QF_HTTP_STATUS', false],
    [new NetworkError('kline', 'ECONNRESET'), 'NetworkError', 'QF_NETWORK', true],
    [
      new UnreachableServiceError('kline', 'http://127.0.0.1:9', 'connect ECONNREFUSED 127.0.0.1:9'),
      'UnreachableServiceError',
      'QF_NETWORK',
      false,
    ],
    [new RequestTimeoutError('suspension', 60_000), 'RequestTimeoutError', 'QF_TIMEOUT', true],
    [
      new DecodeError('kline', 'data.kline_list[0].open_price', 'not a number'),
      'DecodeError',
      'QF_DECODE',
      true,
    ],
    [new MissingItemsError('batch-kline', ['GOLD:1'], [], 3), 'MissingItemsError', 'QF_MISSING_ITEMS', false],
    [new AbortedError('kline'), 'AbortedError', 'QF_ABORTED', false],
    [new ClientClosedError('kline'), 'ClientClosedError', 'QF_CLOSED', false],
    [new BufferOverflowError(10), 'BufferOverflowError', 'QF_BUFFER_OVERFLOW', false],
  ] as [QuoteflowError, string, ErrorCode, boolean][])(
    '%o has name %s, code %s and retryable %s',
    (err, name, code, retryable) => {
      expect(err).toBeInstanceOf(QuoteflowError);
      expect(err).toBeInstanceOf(Error);
      expect(err.name).toBe(name);
      expect(err.code).toBe(code);
      expect(err.retryable).toBe(retryable);
      expect(ERROR_CODES).toContain(err.code);
      expect(isQuoteflowError(err, code)).toBe(true);
    },
  );

  it('keeps the service refusal details and says what to do', () => {
    const err = new TooManyProductsError(refusal);
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({
      endpoint: 'depth-tick',
      ret: 605,
      msg: 'too many requests',
      trace: 'tr-1',
      status: 200,
      codes: ['AAPL.US'],
    });
    expect(err.message).toMatch(/ret 605.*"too many requests".*trace tr-1/);
    expect(err.message).toMatch(/lower limitOverrides/);
  });

  it('names the bad field of a decode error', () => {
    expect(new DecodeError('kline', 'data.kline_list[3].open_price', 'expected a decimal').message).toBe(
      'kline: malformed response at data.kline_list[3].open_price: expected a decimal',
    );
  });

  it('serialises a missing-items error whose partial records hold bigints', () => {
    const err = new MissingItemsError('depth-tick', ['GOLD'], [{ code: 'EURGBP', seq: 1n }], 3);
    expect(err.partial).toEqual([{ code: 'EURGBP', seq: 1n }]);
    expect(JSON.parse(JSON.stringify(err))).toMatchObject({
      code: 'QF_MISSING_ITEMS',
      missing: ['GOLD'],
      attempts: 3,
    });
  });

  it('keeps the cause chain', () => {
    const cause = new Error('ECONNREFUSED');
    expect(new NetworkError('kline', 'refused', cause).cause).toBe(cause);
  });
});

describe('redactToken', () => {
  it.each([
    ['http://h/x?token=abc123&query=%7B%7D', 'http://h/x?token=***&query=%7B%7D'],
    ['GET /x?query=1&token=abc123', 'GET /x?query=1&token=***'],
    ['{"token":"abc123"}', '{"token":"***"}'],
    ['token%3Dabc123', 'token%3D***'],
    ['no secret here', 'no secret here'],
  ])('redacts %s', (input, output) => {
    expect(redactToken(input)).toBe(output);
  });

  it('redacts a literal token anywhere when it is known', () => {
    expect(redactToken('failed for abc123 at abc123', 'abc123')).toBe('failed for *** at ***');
  });
});
