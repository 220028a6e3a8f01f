/**
 * An engine's worker processes and their supervisor. A worker that exits without being asked (a
 * SIGKILL, a crash when its database went away) is started again in the same slot a second later,
 * as systemd or Kubernetes would; a slot keeps its name across restarts (DBOS's executor ID is per
 * slot). Paused (SIGSTOP) workers are remembered, so stopping the fleet wakes them first.
 */
import { stopProcesses } from "@/lib/scenarios/processes";
import type { Spawned } from "@/lib/worker/test-process";
import type { EngineDriver } from "./drivers";

const RESTART_DELAY_MS = 1_000;
const READY_TIMEOUT_MS = 60_000;

type Slot = { worker: Spawned; restarts: number };

/** Workers the harness itself SIGKILLed: their exit is the fault, not a crash. */
const killed = new WeakSet<Spawned>();

export class Fleet {
  private readonly slots = new Map<string, Slot>();
  private closing = false;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly driver: EngineDriver,
    private readonly log: (line: string) => void,
    /** Once aborted (the command was interrupted, and the terminal's SIGINT stopped the workers too), nothing restarts. */
    private readonly signal: AbortSignal,
  ) {}

  /** Worker processes started again by the supervisor. */
  get restarts(): number {
    return [...this.slots.values()].reduce((sum, slot) => sum + slot.restarts, 0);
  }

  /** Workers that exited on their own while the fleet ran (not stopped, not killed by the harness). */
  crashes = 0;

  /** Starts `slot`'s worker and waits until it serves. */
  async start(slot: string): Promise<Spawned> {
    const worker = this.spawn(slot);
    this.slots.set(slot, { worker, restarts: 0 });
    await worker.waitForLine(this.driver.readyLine, READY_TIMEOUT_MS);
    return worker;
  }

  /** The slot's current process. */
  worker(slot: string): Spawned {
    const entry = this.slots.get(slot);
    if (!entry) throw new Error(`no worker in slot ${slot}`);
    return entry.worker;
  }

  kill(slot: string): void {
    const worker = this.worker(slot);
    killed.add(worker);
    worker.process.kill("SIGKILL");
  }

  pause(slot: string): void {
    this.worker(slot).process.kill("SIGSTOP");
  }

  resume(slot: string): void {
    this.worker(slot).process.kill("SIGCONT");
  }

  /** Stops every worker gracefully (SIGCONT first: a stopped process cannot handle SIGTERM), and no more restarts. */
  async stop(): Promise<void> {
    this.closing = true;
    await Promise.allSettled([...this.pending]);
    await stopProcesses([...this.slots.values()].map((slot) => slot.worker), 10_000);
  }

  /** Kills what is left at once: for an exit hook, where nothing asynchronous runs. */
  killNow(): void {
    this.closing = true;
    for (const { worker } of this.slots.values()) if (worker.alive) worker.process.kill("SIGKILL");
  }

  private spawn(slot: string): Spawned {
    const worker = this.driver.spawnWorker(slot);
    void worker.exited.then(({ code, signal }) => {
      const entry = this.slots.get(slot);
      if (this.closing || this.signal.aborted || !entry || entry.worker !== worker) return;
      this.log(`  worker ${slot} exited (code ${code}, signal ${signal}); restarting it in ${RESTART_DELAY_MS} ms`);
      if (!killed.has(worker)) {
        this.crashes += 1;
        this.log(worker.tail(12));
      }
      const restart = new Promise<void>((resolve) => setTimeout(resolve, RESTART_DELAY_MS)).then(() => {
        if (this.closing || this.signal.aborted) return;
        entry.worker = this.spawn(slot);
        entry.restarts += 1;
      });
      this.pending.add(restart);
      void restart.finally(() => this.pending.delete(restart));
    });
    return worker;
  }
}
