import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ClusterEventLog } from './cluster-event-log.js';
import { createLogging } from './create-logger.js';
import { resolveLogSettings } from './log-settings.js';
import { Redactor } from './redactor.js';
import { StderrChannel } from './stderr-channel.js';

type Line = { level: number; msg: string } & Record<string, unknown>;

/** The CLI's logging as a worker under a supervisor has it: stderr not a terminal, default level. */
function defaultLogging(): { log: ClusterEventLog; lines: () => Line[] } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  const logging = createLogging(
    new StderrChannel(stream, new Redactor(), false),
    resolveLogSettings({}, {}, false),
  );
  return {
    log: new ClusterEventLog(logging.logger, logging.status, 'host~42~abc'),
    lines: () =>
      text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Line),
  };
}

const members = (list: string[], fenced = false) =>
  ({ type: 'members', atMs: 1, members: list, fenced }) as const;
const assignment = (held: string[], gained: string[], lost: string[] = []) =>
  ({ type: 'assignment', atMs: 2, held, gained, lost, pending: [] }) as const;

describe('ClusterEventLog', () => {
  it('says at the default level, once, which worker holds which codes after each change, and nothing at a quiet start', () => {
    const { log, lines } = defaultLogging();
    log.note(members(['host~42~abc', 'other']), 'g');
    log.note(assignment(['A', 'B'], ['A', 'B']), 'g');
    log.note(assignment(['A', 'B'], []), 'g'); // a retried claim that changed nothing
    log.note(members(['host~42~abc']), 'g'); // the other worker died
    log.note(assignment(['A', 'B', 'C', 'D'], ['C', 'D']), 'g');
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'cluster assignment',
        worker: 'host~42~abc',
        group: 'g',
        members: ['host~42~abc', 'other'],
        held: 2,
        codes: ['A', 'B'],
        gained: ['A', 'B'],
      }),
      expect.objectContaining({
        level: 30,
        msg: 'cluster assignment',
        worker: 'host~42~abc',
        members: ['host~42~abc'],
        held: 4,
        codes: ['A', 'B', 'C', 'D'],
        gained: ['C', 'D'],
        lost: [],
      }),
    ]);
  });

  it('warns of a fence, names at most 20 codes and counts the rest', () => {
    const { log, lines } = defaultLogging();
    const many = Array.from({ length: 25 }, (_, i) => `C${i}`);
    log.note(assignment(many, many));
    log.note(members([], true));
    const [held, fenced] = lines();
    expect(held).toMatchObject({ held: 25, codes: [...many.slice(0, 20), '… 5 more'] });
    expect(fenced).toMatchObject({ level: 40, msg: 'cluster members', fenced: true, worker: 'host~42~abc' });
  });
});
