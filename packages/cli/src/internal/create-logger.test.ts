import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogging } from './create-logger.js';
import { resolveLogSettings } from './log-settings.js';
import { Redactor } from './redactor.js';
import { StderrChannel } from './stderr-channel.js';

function capture(): { stream: Writable; lines: () => { level: number; msg: string }[] } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return {
    stream,
    lines: () =>
      text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { level: number; msg: string }),
  };
}

describe('createLogging', () => {
  it('shows the same missing-items warning once per endpoint and codes, repeats only at debug', () => {
    const out = capture();
    const logging = createLogging(
      new StderrChannel(out.stream, new Redactor(), false),
      resolveLogSettings({ verbose: true }, {}, false),
    );
    for (let poll = 0; poll < 5; poll++)
      logging.logger.warn(
        { endpoint: 'depth-tick', missing: ['700.HK'], round: 1 },
        'response.missing-items',
      );
    logging.logger.warn({ endpoint: 'depth-tick', missing: ['AAPL.US'], round: 1 }, 'response.missing-items');
    logging.logger.warn({ endpoint: 'depth-tick' }, 'request.retry');
    logging.logger.warn({ endpoint: 'depth-tick' }, 'request.retry');
    const levels = out.lines().map((l) => [l.msg, l.level]);
    expect(levels).toEqual([
      ['response.missing-items', 40],
      ['response.missing-items', 20],
      ['response.missing-items', 20],
      ['response.missing-items', 20],
      ['response.missing-items', 20],
      ['response.missing-items', 40],
      ['request.retry', 40],
      ['request.retry', 40],
    ]);
  });
});
