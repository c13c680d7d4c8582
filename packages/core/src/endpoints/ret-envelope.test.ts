import { describe, expect, it } from 'vitest';
import { interpretRetResponse } from './ret-envelope.js';

const interpret = (status: number, text: string) => {
  try {
    return interpretRetResponse('depth-tick', { status, text }, 'tr-x', ['AAPL.US']);
  } catch (e) {
    return e;
  }
};

describe('interpretRetResponse', () => {
  it.each([
    [
      200,
      { ret: 401, msg: 'token invalid', trace: 'tr-x', data: {} },
      'UnauthorizedTokenError',
      'QF_UNAUTHORIZED_TOKEN',
      false,
    ],
    [
      401,
      { ret: 401, msg: 'token invalid', trace: 'tr-x', data: {} },
      'UnauthorizedTokenError',
      'QF_UNAUTHORIZED_TOKEN',
      false,
    ],
    [
      200,
      { ret: 429, msg: 'rate limit', trace: 'tr-x', data: {} },
      'RateLimitedError',
      'QF_RATE_LIMITED',
      true,
    ],
    [429, { ret: 429, msg: 'rate limit', trace: 'tr-x' }, 'RateLimitedError', 'QF_RATE_LIMITED', true],
    [
      200,
      { ret: 400, msg: 'request data param invalid', trace: 'tr-x' },
      'BadRequestError',
      'QF_BAD_REQUEST',
      false,
    ],
    [200, { ret: 600, msg: 'code invalid', trace: 'tr-x' }, 'InvalidCodeError', 'QF_INVALID_CODE', false],
    [200, { ret: 601, msg: 'body empty', trace: 'tr-x' }, 'BodyEmptyError', 'QF_BODY_EMPTY', false],
    [
      200,
      { ret: 604, msg: 'code unauthorized', trace: 'tr-x' },
      'UnauthorizedCodeError',
      'QF_UNAUTHORIZED_CODE',
      false,
    ],
    [
      200,
      { ret: 605, msg: 'too many requests', trace: 'tr-x' },
      'TooManyProductsError',
      'QF_TOO_MANY_PRODUCTS',
      false,
    ],
    [200, { ret: 606, msg: 'other', trace: 'tr-x' }, 'ServiceError', 'QF_SERVICE', false],
    [503, { ret: 500, msg: 'busy', trace: 'tr-x' }, 'ServiceError', 'QF_SERVICE', true],
  ])('HTTP %i with %j is a %s (%s, retryable %s)', (status, body, name, code, retryable) => {
    const err = interpret(status, JSON.stringify(body)) as Error & Record<string, unknown>;
    expect(err.name).toBe(name);
    expect(err).toMatchObject({
      code,
      retryable,
      ret: body.ret,
      msg: body.msg,
      trace: 'tr-x',
      status,
      endpoint: 'depth-tick',
    });
  });

  it.each([
    [502, '<html>Bad Gateway</html>', 'HttpStatusError', 'QF_HTTP_STATUS', true],
    [404, 'not found', 'HttpStatusError', 'QF_HTTP_STATUS', false],
    [429, 'slow down', 'RateLimitedError', 'QF_RATE_LIMITED', true],
    [200, 'not json', 'DecodeError', 'QF_DECODE', true],
    [200, '{"msg":"ok"}', 'DecodeError', 'QF_DECODE', true],
  ])('HTTP %i with body %j is a %s (%s, retryable %s)', (status, text, name, code, retryable) => {
    const err = interpret(status, text) as Error;
    expect(err.name).toBe(name);
    expect(err).toMatchObject({ code, retryable });
  });

  it('returns the envelope of ret 200 without looking at data', () => {
    expect(interpret(200, '{"ret":200,"msg":"ok","trace":"t","data":{"anything":1}}')).toMatchObject({
      ret: 200,
      data: { anything: 1 },
    });
  });

  it('names the requested codes in an invalid-code refusal', () => {
    expect((interpret(200, '{"ret":600,"msg":"code invalid","trace":"t"}') as Error).message).toMatch(
      /AAPL\.US/,
    );
  });
});
