import { describe, expect, it } from 'vitest';
import { FILE_SINK_ERROR_CODES, FileSinkError } from './file-sink-error.js';

describe('FileSinkError', () => {
  it.each([
    ['QF_INVALID_OPTION', false],
    ['QF_FILE_WRITE', true],
    ['QF_CLOSED', false],
    ['QF_VALUE_OUT_OF_RANGE', false],
  ] as const)('carries name, code %s, retryable %s and the cause', (code, retryable) => {
    const cause = new Error('disk full');
    const err = new FileSinkError(code, 'm', { retryable, cause });
    expect(err).toBeInstanceOf(Error);
    expect([err.name, err.code, err.retryable, err.cause]).toEqual(['FileSinkError', code, retryable, cause]);
    expect(FILE_SINK_ERROR_CODES).toContain(code);
  });

  it('is not retryable unless told', () => {
    expect(new FileSinkError('QF_FILE_WRITE', 'm').retryable).toBe(false);
  });
});
