import { describe, expect, it } from 'vitest';
import manifest from '../../package.json' with { type: 'json' };
import { NODE_ENGINES, satisfiesEngines } from './supported-node.js';

describe('supported Node.js', () => {
  it("reads the package's engines", () => {
    expect(NODE_ENGINES).toBe(manifest.engines.node);
  });

  it.each([
    ['22.22.0', true],
    ['v22.22.0', true],
    ['22.22.1', true],
    ['22.23.0', true],
    ['24.0.0', true],
    ['23.0.0', true],
    ['22.21.9', false],
    ['22.9.100', false],
    ['20.20.2', false],
    ['18.0.0', false],
  ] as const)('%s against >=22.22.0: %s', (version, ok) => {
    expect(satisfiesEngines(version, '>=22.22.0')).toBe(ok);
  });

  it('compares each part as a number, not as text', () => {
    expect(satisfiesEngines('22.100.0', '>=22.22.0')).toBe(true);
    expect(satisfiesEngines('100.0.0', '>=22.22.0')).toBe(true);
    expect(satisfiesEngines('9.0.0', '>=22.22.0')).toBe(false);
  });

  it('leaves a range it does not read to Node', () => {
    expect(satisfiesEngines('20.0.0', '^22.22.0 || >=24')).toBe(true);
  });
});
