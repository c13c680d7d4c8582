// A process of the race test in `sqlite-window-store.test.ts`: takes starts of one window (2 per
// 20 ms, start-anchored) from the shared database for 400 ms as fast as it can, and prints the
// instant of each start it got, one per line. The scheduler's clock here is the monotonic clock
// itself (offset 0), and the store reads it last once it holds the lock (the instant it stores),
// so the printed instants are exactly the stored ones.
import { SqliteWindowStore } from '../src/scheduler/sqlite-window-store.js';
import { systemMachineTime, type MachineTime } from '../src/scheduler/internal/machine-time.js';

const [stateDir, token] = process.argv.slice(2) as [string, string];
let lastMs = 0;
const time: MachineTime = {
  monotonicMs: () => (lastMs = systemMachineTime.monotonicMs()),
  clockMs: () => lastMs,
  bootId: () => systemMachineTime.bootId(),
};
const store = new SqliteWindowStore({ token, stateDir, time });
const spec = { kind: 'sliding', key: 'race', windowMs: 20, limit: 2, anchor: 'start' } as const;
const endMs = systemMachineTime.monotonicMs() + 400;
const got: number[] = [];
for (let now = systemMachineTime.monotonicMs(); now < endMs; now = systemMachineTime.monotonicMs()) {
  if (store.tryAcquire([spec], now).acquired) got.push(lastMs);
}
store.close();
process.stdout.write(got.map((t) => `${t}\n`).join(''));
