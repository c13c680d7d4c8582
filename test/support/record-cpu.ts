/**
 * Opt-in (QF_CPU_LOG=FILE): appends one JSON line per test file to FILE, `{ file, cpuSeconds }`,
 * the CPU its worker and the child processes it waited for spent on it (user + system, from
 * /proc/self/stat). For ordering and trimming the suite on a two-core box, where CPU, not the
 * number of workers, bounds the run; a no-op otherwise (and off Linux).
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll } from 'vitest';

const log = process.env['QF_CPU_LOG'];

/** utime + stime + cutime + cstime of this process, in clock ticks (fields 14-17 of /proc/self/stat). */
function cpuTicks(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
}

if (log !== undefined && log !== '' && process.platform === 'linux') {
  // Set-up files run before each test file's imports: those count too.
  const start = cpuTicks();
  afterAll(({}, suite) => {
    // Linux reports these fields in USER_HZ, 100 a second on every architecture Node runs on.
    const line = { file: suite.file.filepath, cpuSeconds: (cpuTicks() - start) / 100 };
    appendFileSync(log, `${JSON.stringify(line)}\n`);
  });
}
