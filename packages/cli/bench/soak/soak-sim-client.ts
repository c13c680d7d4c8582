// The harness's side of the soak's simulator process (soak-sim.ts): started with `fork` on the
// run's shared clock, asked over IPC for its daily counts and the market's bars, closed at the end.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cpuSecondsOf } from './soak-process.js';
import type { SoakDayCount, SoakSimConfig, SoakSimReply, SoakSimRequest } from './soak-sim-protocol.js';

type Ask = SoakSimRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

export class SoakSim {
  #nextId = 1;
  readonly #waiting = new Map<number, (reply: SoakSimReply) => void>();

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.on('message', (m: SoakSimReply) => {
      this.#waiting.get(m.id)?.(m);
      this.#waiting.delete(m.id);
    });
  }

  /** Starts the simulator process with `config` on the shared clock of `clockEnv`. */
  static async start(config: SoakSimConfig, clockEnv: Readonly<Record<string, string>>): Promise<SoakSim> {
    const child = fork(fileURLToPath(new URL('./soak-sim.ts', import.meta.url)), [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, ...clockEnv, SOAK_SIM_CONFIG: JSON.stringify(config) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      child.once('message', (m: SoakSimReply) =>
        m.type === 'ready' ? resolve(m.url) : reject(new Error('soak-sim: no ready')),
      );
      child.once('exit', (code) => reject(new Error(`soak-sim exited ${code} before it was ready`)));
    });
    return new SoakSim(child, url);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  #ask(message: Ask): Promise<SoakSimReply> {
    const id = this.#nextId++;
    return new Promise((resolve) => {
      this.#waiting.set(id, resolve);
      this.child.send({ ...message, id } as SoakSimRequest);
    });
  }

  /** Requests and refusals so far, per Shanghai date (the service's daily reset). */
  async counts(): Promise<readonly SoakDayCount[]> {
    const reply = await this.#ask({ type: 'counts' });
    return 'days' in reply ? reply.days : [];
  }

  /** The closed bars (start, close) of a series starting in [fromMs, toMs], as of `nowMs`. */
  async bars(
    code: string,
    klineType: number,
    fromMs: number,
    toMs: number,
    nowMs: number,
  ): Promise<readonly (readonly [number, number])[]> {
    const count =
      klineType === 1 ? Math.ceil((toMs - fromMs) / 60_000) + 2 : Math.ceil((toMs - fromMs) / 86_400_000) + 4;
    const reply = await this.#ask({ type: 'bars', code, klineType, fromMs, toMs, nowMs, count });
    return 'bars' in reply ? reply.bars : [];
  }

  /** CPU seconds (user + system) of the simulator process so far. */
  cpuSeconds(): Promise<number> {
    return cpuSecondsOf(this.child.pid);
  }

  /** Stops the simulator; its final counts. */
  async close(): Promise<readonly SoakDayCount[]> {
    const reply = await this.#ask({ type: 'close' });
    return 'days' in reply ? reply.days : [];
  }
}
