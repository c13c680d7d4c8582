import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { quoteflowStateDir } from './quoteflow-state-dir.js';

describe('quoteflowStateDir', () => {
  it('takes QUOTEFLOW_STATE_DIR first, then $XDG_STATE_HOME/quoteflow, then ~/.local/state/quoteflow', () => {
    expect(quoteflowStateDir({ QUOTEFLOW_STATE_DIR: '/s', XDG_STATE_HOME: '/x', HOME: '/h' })).toBe('/s');
    expect(quoteflowStateDir({ XDG_STATE_HOME: '/x', HOME: '/h' })).toBe('/x/quoteflow');
    expect(quoteflowStateDir({ HOME: '/h' })).toBe('/h/.local/state/quoteflow');
    expect(quoteflowStateDir({})).toBe(join(homedir(), '.local/state/quoteflow'));
  });

  it('ignores an empty or relative XDG_STATE_HOME, as the XDG specification asks', () => {
    expect(quoteflowStateDir({ XDG_STATE_HOME: 'rel', HOME: '/h' })).toBe('/h/.local/state/quoteflow');
    expect(quoteflowStateDir({ QUOTEFLOW_STATE_DIR: '', XDG_STATE_HOME: '', HOME: '/h' })).toBe(
      '/h/.local/state/quoteflow',
    );
  });
});
