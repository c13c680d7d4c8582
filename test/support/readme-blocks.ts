// The fenced code blocks of a README, with what a fragment assumes: test/readme-blocks.test.ts
// compiles and runs them against the workspace, test/packed-packages.test.ts against the packed
// packages. A block that is a fragment of a larger program says what it assumes in an HTML comment
// right above it (`<!-- readme-test: assumes ... -->`, invisible on GitHub).
import ts from 'typescript';

/** How a README reader's project compiles them: strict, Node's module resolution. */
export const READER_COMPILER_OPTIONS: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2023,
  lib: ['lib.es2023.d.ts', 'lib.esnext.disposable.d.ts'],
  types: ['node'],
  strict: true,
  noEmit: true,
};

export interface Block {
  readonly readme: string;
  /** Line of the opening fence (1-based). */
  readonly line: number;
  readonly lang: string;
  readonly code: string;
  /** What a fragment assumes (declarations), from the comment above it. */
  readonly assumes: string;
}

/** The fenced code blocks of a Markdown file. */
export function blocksOf(readme: string, text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)/.exec(lines[i]!);
    if (open === null) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith('```'));
    // The comment right above the block (blank lines between allowed), and no other.
    const before = lines.slice(0, i).join('\n');
    const last = before.slice(before.lastIndexOf('<!-- readme-test: assumes\n'));
    const assumes = /^<!-- readme-test: assumes\n([\s\S]*?)-->\s*$/.exec(last)?.[1] ?? '';
    blocks.push({ readme, line: i + 1, lang: open[1]!, code: lines.slice(i + 1, end).join('\n'), assumes });
    i = end;
  }
  return blocks;
}
