// A process of the crash tests in `sqlite-window-store.test.ts`: takes the one start of a
// settle-anchored window (in-flight bound from argv, ms), prints the monotonic instant read just before
// (the start cannot be recorded earlier), and hangs "mid-request" until it is killed.
import { SqliteWindowStore } from '../src/scheduler/sqlite-window-store.js';
import { systemMachineTime } from '../src/scheduler/internal/machine-time.js';

const [stateDir, token, boundMs] = process.argv.slice(2) as [string, string, string];
const store = new SqliteWindowStore({ token, stateDir, inFlightBoundMs: Number(boundMs) });
const spec = { kind: 'sliding', key: 'held', windowMs: 100, limit: 1, anchor: 'settle' } as const;
const beforeMs = systemMachineTime.monotonicMs();
const got = store.tryAcquire([spec], Date.now());
process.stdout.write(`${got.acquired ? beforeMs : 'refused'}\n`);
setInterval(() => undefined, 1_000);
