// Every TypeScript block of the READMEs compiles as pasted (strict, against the workspace's
// packages), and the README's runnable shell lines run: a reader who copies one gets code that works.
// A block that is a fragment of a larger program says what it assumes in an HTML comment right
// above it (`<!-- readme-test: assumes ... -->`, invisible on GitHub): only those lines are added.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { startSimulator } from '../packages/simulator/src/index.js';
import { closedAddress } from '../packages/sinks/test-support/closed-address.js';
import { blocksOf, READER_COMPILER_OPTIONS, type Block } from './support/readme-blocks.js';

const ROOT = resolve(import.meta.dirname, '..');
const WORK = join(ROOT, '.cache', 'readme-blocks');
const READMES = [
  'README.md',
  ...['cli', 'cluster', 'core', 'operators', 'pipelines', 'report', 'simulator', 'sinks'].map(
    (p) => `packages/${p}/README.md`,
  ),
];

/** Runs a module with this Node to its end (a minute at most), stdout and stderr collected. */
function runNode(
  file: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [file], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((done) =>
    child.on('close', (code) => {
      clearTimeout(killer);
      done({ code, stderr });
    }),
  );
}

async function allBlocks(): Promise<Block[]> {
  const all: Block[] = [];
  for (const readme of READMES) all.push(...blocksOf(readme, await readFile(join(ROOT, readme), 'utf8')));
  return all;
}

describe('README code blocks', () => {
  it('every TypeScript block compiles as pasted (strict)', async () => {
    const blocks = (await allBlocks()).filter((b) => b.lang === 'ts' || b.lang === 'typescript');
    expect(blocks.length).toBeGreaterThan(10);
    await rm(WORK, { recursive: true, force: true });
    await mkdir(WORK, { recursive: true });
    const files = new Map<string, Block>();
    for (const b of blocks) {
      const file = join(WORK, `${b.readme.replaceAll('/', '_')}-${b.line}.ts`);
      // An assumption's lines come first; `export {}` makes each block a module of its own.
      await writeFile(file, `${b.assumes}${b.code}\nexport {};\n`);
      files.set(file, b);
    }
    const program = ts.createProgram([...files.keys()], {
      ...READER_COMPILER_OPTIONS,
      skipLibCheck: true,
      esModuleInterop: true,
    });
    const problems = ts.getPreEmitDiagnostics(program).flatMap((d) => {
      const block = d.file === undefined ? undefined : files.get(d.file.fileName);
      if (block === undefined || d.file === undefined) return [];
      const { line } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
      const assumed = block.assumes === '' ? 0 : block.assumes.split('\n').length - 1;
      const where = line < assumed ? 'its readme-test comment' : `line ${block.line + 1 + line - assumed}`;
      return [
        `${block.readme}:${block.line} (${where}): ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
      ];
    });
    expect(problems, `compiled in ${relative(ROOT, WORK)}`).toEqual([]);
  }, 120_000);

  it("runs the README's depth-to-Kafka example against the simulator: with no broker it fails, naming it and the refused connection", async () => {
    const block = (await allBlocks()).find(
      (b) => b.readme === 'README.md' && b.lang === 'ts' && b.code.includes('pollDepth('),
    )!;
    const file = join(WORK, 'readme-depth-to-kafka.mjs');
    await mkdir(WORK, { recursive: true });
    const js = ts.transpileModule(block.code, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023 },
    }).outputText;
    await writeFile(file, js);
    const sim = await startSimulator({ port: 0, tokens: { 'readme-token-5e1a': 'premium' }, seed: 3 });
    try {
      const broker = await closedAddress();
      const r = await runNode(file, {
        QUOTEFLOW_BASE_URL: sim.url,
        QUOTEFLOW_TOKEN: 'readme-token-5e1a',
        KAFKA_BROKERS: broker,
      });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(`no connection to Kafka at ${broker}`);
      expect(r.stderr).toContain(`connect ECONNREFUSED ${broker}`);
      // It did run against the simulator: the depth polls reached it.
      expect(sim.log.filter({ endpoint: 'depth-tick' }).length).toBeGreaterThan(0);
    } finally {
      await sim.close();
    }
  }, 90_000);

  it("runs the README's offline CLI lines (plan, run --dry-run) as written, from a shell, with the README's PATH", async () => {
    const sh = (await allBlocks()).filter((b) => b.readme === 'README.md' && b.lang === 'sh');
    const shellLines = sh.flatMap((b) => b.code.split('\n')).map((l) => l.replace(/\s+#.*$/, '').trim());
    const lines = shellLines.filter((l) => /^quoteflow (plan|run --dry-run) /.test(l));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    // What the README tells a reader to run first so that `quoteflow` is a command.
    const pathLines = shellLines.filter((l) => l.startsWith('export PATH='));
    // A user's shell after the set-up: no node_modules/.bin on the PATH (vitest's runner adds it).
    const userPath = (process.env['PATH'] ?? '')
      .split(':')
      .filter((d) => !d.includes('node_modules'))
      .join(':');
    for (const line of lines) {
      const r = await runShell([...pathLines, line].join('\n'), {
        PATH: userPath,
        // --dry-run checks the service options too: the README's exports give them.
        QUOTEFLOW_BASE_URL: 'http://127.0.0.1:1',
        QUOTEFLOW_TOKEN: 'demo',
        QUOTEFLOW_PLAN: 'professional',
      });
      expect(r.code, `${line}\n${r.stderr}`).toBe(0);
      expect(r.stdout, line).not.toBe('');
    }
  }, 60_000);
});

/** Runs `script` with bash at the repository root (as a reader pastes it), stdout and stderr collected. */
function runShell(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((done) => child.on('close', (code) => done({ code, stdout, stderr })));
}
