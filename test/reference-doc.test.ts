// docs/reference.md is the repository's own reference (commands, flags, exit codes, columns, topics):
// it stays in step with what `quoteflow <command> --help` prints, flag by flag, both ways.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli } from '../packages/cli/src/run-cli.js';

const REFERENCE = resolve(import.meta.dirname, '../docs/reference.md');

/** `quoteflow ARGS` in-process (the binary's own entry point), what it printed on stdout and stderr. */
async function quoteflow(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const [stdout, stderr] = [new PassThrough(), new PassThrough()];
  let [out, err] = ['', ''];
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await runCli(args, { stdout, stderr, env: {}, cwd: process.cwd() });
  return { code, stdout: out, stderr: err };
}

/** The flags (`--name` and `-x`) an options section of `--help` lists, one per option line. */
function helpFlags(help: string): Set<string> {
  const flags = new Set<string>();
  const options = help.split(/^Options:$/m)[1] ?? '';
  for (const line of options.split('\n')) {
    const m = /^ {2}((?:-[A-Za-z], )?--[a-z][a-z0-9-]*)/.exec(line);
    if (m === null) continue;
    for (const f of m[1]!.split(', ')) flags.add(f);
  }
  return flags;
}

/** The flags of the first column of every table row in a Markdown section. */
function referenceFlags(section: string): Set<string> {
  const flags = new Set<string>();
  for (const line of section.split('\n')) {
    const first = /^\|([^|]*)\|/.exec(line)?.[1];
    if (first === undefined) continue;
    for (const m of first.matchAll(/`(--?[A-Za-z][a-z0-9-]*)/g)) flags.add(m[1]!);
    for (const m of first.matchAll(/, (--[a-z][a-z0-9-]*)/g)) flags.add(m[1]!);
  }
  return flags;
}

/** The text under a heading up to the next heading of the same or a higher level. */
function section(doc: string, heading: RegExp): string | undefined {
  const lines = doc.split('\n');
  const start = lines.findIndex((l) => heading.test(l));
  if (start < 0) return undefined;
  const level = /^#+/.exec(lines[start]!)![0].length;
  const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && /^#+/.exec(l)![0].length <= level);
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** The commands `quoteflow --help` lists (but `help`). */
function commandsOf(help: string): string[] {
  const commands = help.split(/^Commands:$/m)[1] ?? '';
  return [...commands.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
}

describe('docs/reference.md', () => {
  it('lists every flag of every command that --help lists, and no other', async () => {
    const doc = await readFile(REFERENCE, 'utf8');
    const top = await quoteflow(['--help']);
    expect(top.code, top.stderr).toBe(0);
    const commands = commandsOf(top.stdout);
    expect(commands).toEqual(expect.arrayContaining(['sync', 'backfill', 'report', 'inspect', 'run', 'sim']));
    // Every command takes the program's own options: one section lists them.
    const everyCommand = referenceFlags(section(doc, /^## Options of every command$/) ?? '');
    const serviceSection = section(doc, /^### Options of every command that calls the service$/) ?? '';
    const global = helpFlags(top.stdout);
    const problems: string[] = [];
    for (const f of global)
      if (!everyCommand.has(f))
        problems.push(`docs/reference.md, "Options of every command": lacks ${f} (in quoteflow --help)`);
    const helps = await Promise.all(commands.map((c) => quoteflow([c, '--help'])));
    commands.forEach((command, i) => {
      const help = helps[i]!;
      expect(help.code, `${command} --help: ${help.stderr}`).toBe(0);
      const text = section(doc, new RegExp(`^### \`quoteflow ${command}[\` ]`));
      if (text === undefined) {
        problems.push(
          `docs/reference.md: no section "### \`quoteflow ${command}\`" (quoteflow --help lists it)`,
        );
        return;
      }
      // "see above" rows name the service options, listed once in their own section.
      const listed = referenceFlags(text);
      const documented = new Set([...listed, ...everyCommand]);
      if (/see above/.test(text)) for (const f of referenceFlags(serviceSection)) documented.add(f);
      const flags = helpFlags(help.stdout);
      for (const f of flags)
        if (!documented.has(f))
          problems.push(
            `docs/reference.md, quoteflow ${command}: lacks ${f} (in quoteflow ${command} --help)`,
          );
      for (const f of listed)
        if (!flags.has(f))
          problems.push(
            `docs/reference.md, quoteflow ${command}: lists ${f}, which quoteflow ${command} --help does not have`,
          );
    });
    expect(problems).toEqual([]);
  });

  it('names the exit codes of the contract and the columns of every dataset', async () => {
    const doc = await readFile(REFERENCE, 'utf8');
    for (const code of ['0', '1', '2', '3'])
      expect(section(doc, /^## Exit codes$/)).toMatch(new RegExp(`^\\| ${code}\\s+\\|`, 'm'));
    const datasets = section(doc, /^## Datasets on disk$/) ?? '';
    for (const column of ['`ts`', '`read_at`', '`seq`', '`tick_time`', '`halt_at`', '`publish_date`'])
      expect(datasets).toContain(column);
    expect(section(doc, /^## Kafka topics$/)).toMatch(/`P\.kline`[\s\S]*`P\.depth`[\s\S]*`P\.suspension`/);
  });

  it('is what the README links to, inside the repository', async () => {
    const readme = await readFile(resolve(import.meta.dirname, '../README.md'), 'utf8');
    expect(readme).toContain('](docs/reference.md)');
    expect(readme).not.toMatch(/\]\(\.\.\//);
  });
});
