import { readFileSync } from 'node:fs';
import { uptime } from 'node:os';

/**
 * The two clocks a cross-process store needs: the scheduler's (epoch ms) and one monotonic clock
 * that every process of the machine reads alike (so instants stored by one compare with another's).
 */
export interface MachineTime {
  /** The scheduler's clock, epoch ms (`Date.now()` for the system clock). */
  clockMs(): number;
  /** Machine-wide monotonic ms: the same value in every process at one instant. */
  monotonicMs(): number;
  /** Identifies the current boot: monotonic instants of another boot are not comparable. */
  bootId(): string;
}

/**
 * `process.hrtime` is libuv's `uv_hrtime`: `clock_gettime(CLOCK_MONOTONIC)` on Linux (ms since
 * boot, the same in every process of the host and its containers, unless a time namespace
 * offsets it), `mach_absolute_time` on macOS, `QueryPerformanceCounter` on Windows: machine-wide
 * in each case. It stops while the machine is suspended (entries then count that much longer,
 * which is conservative).
 */
export const systemMachineTime: MachineTime = {
  clockMs: () => Date.now(),
  monotonicMs: () => Number(process.hrtime.bigint()) / 1e6,
  bootId: () => {
    try {
      return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      // No boot id (not Linux): the boot instant to the minute. A wrong "new boot" only re-anchors
      // stored instants by the drift of the wall clock, which is harmless.
      return `boot-minute:${Math.round((Date.now() - uptime() * 1_000) / 60_000)}`;
    }
  },
};
