import { describe, expect, it } from 'vitest';
import {
  checkFormatVersion,
  FormatVersionError,
  QUOTEFLOW_FORMAT_VERSION,
  UNVERSIONED_FORMAT,
} from './format-version.js';

describe('checkFormatVersion', () => {
  it.each([
    [undefined, UNVERSIONED_FORMAT],
    [null, UNVERSIONED_FORMAT],
    [1, 1],
    ['1', 1],
    [QUOTEFLOW_FORMAT_VERSION, QUOTEFLOW_FORMAT_VERSION],
    [String(QUOTEFLOW_FORMAT_VERSION), QUOTEFLOW_FORMAT_VERSION],
  ])('reads %j as format version %i', (raw, version) => {
    expect(checkFormatVersion('the kline table at /d', raw)).toBe(version);
  });

  it('refuses a newer version naming what, its version and this release’s', () => {
    const newer = QUOTEFLOW_FORMAT_VERSION + 1;
    const err = (() => {
      try {
        checkFormatVersion('the kline table at /d', String(newer));
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(FormatVersionError);
    expect(err).toMatchObject({
      name: 'FormatVersionError',
      code: 'QF_FORMAT_VERSION',
      retryable: false,
      what: 'the kline table at /d',
      found: newer,
      supported: QUOTEFLOW_FORMAT_VERSION,
    });
    expect((err as Error).message).toBe(
      `the kline table at /d was written in quoteflow format version ${newer}, newer than this release's format version ${QUOTEFLOW_FORMAT_VERSION}: upgrade quoteflow to continue it`,
    );
  });

  it.each([0, -1, 1.5, '2.0', 'two', '', true, {}])('refuses %j, which is not a version', (raw) => {
    expect(() => checkFormatVersion('state file "s.json"', raw)).toThrow(
      new RegExp(`^state file "s.json" says quoteflow format version .*, which is not a version`),
    );
  });
});
