/**
 * One cell's running world: its databases, the destination process, the worker processes, the
 * workflows it created, and what it injected. A fault script (faults.ts) drives it; the matrix
 * (matrix.ts) settles it and hands it to the checker.
 */
import pg from "pg";
import { createPool } from "@/lib/db/pool";
import { createStepClass } from "@/lib/engine/test-support";
import { createWorkflows } from "@/lib/engine/workflow";
import { sendEvent } from "@/lib/events/send";
import type { SentEvent } from "@/lib/events/types";
import { createRequest } from "@/lib/requests/create";
import { SCENARIO_CLASS, SCENARIO_SIGNAL } from "./definitions";
import type { ThrowawayCluster } from "./cluster";
import type { FailoverServers } from "./standby-pair";
import { DestinationProcess, spawnWorker, stopProcesses, waitUntil, type Spawned, type WorkerOptions } from "./processes";
import { seededRandom } from "@/lib/demo/destination/faults";
import { TIMING, type Contract, type FaultKind } from "./types";


/** A moment a worker lost its lease by fault: recovery latency is measured from here on the DB clock. */
export type LatencyProbe = { stepId: string; term: number; faultAt: Date };

export class Cell {
  readonly engine: pg.Pool;
  readonly destinationPool: pg.Pool;
  readonly workers: Spawned[] = [];
  readonly workflowIds: string[] = [];
  readonly stepIds: string[] = [];
  readonly faultsInjected: Record<string, number> = {};
  readonly latencyProbes: LatencyProbe[] = [];
  readonly failures: string[] = [];
  readonly notes: string[] = [];
  /** Acknowledged workflows a fault script showed lost for a reason it states (an asynchronous failover). */
  readonly excused = new Set<string>();
  /** Figures a fault script measured, for the cell's detail. */
  readonly figures: Record<string, unknown> = {};
  /** Every event the harness sent and saw acknowledged, in order (a repeat answers with the same id). */
  readonly signals: SentEvent[] = [];
  /** Workers whose death would be a finding (they were never meant to be killed). */
  readonly mustSurvive = new Set<Spawned>();
  readonly random: () => number;
  private workerCount = 0;

  constructor(
    readonly fault: FaultKind,
    readonly contract: Contract,
    readonly seed: number,
    readonly engineUrl: string,
    readonly destinationUrl: string,
    readonly destination: DestinationProcess,
    readonly cluster: ThrowawayCluster | null,
    readonly standbyPair: FailoverServers | null = null,
  ) {
    this.engine = createPool(engineUrl, { applicationName: "fl-scenario-harness", max: 4 });
    this.destinationPool = createPool(destinationUrl, { applicationName: "fl-scenario-checker", max: 2 });
    this.random = seededRandom(seed);
  }

  static async open(options: {
    fault: FaultKind;
    contract: Contract;
    seed: number;
    engineUrl: string;
    destinationUrl: string;
    cluster: ThrowawayCluster | null;
    standbyPair?: FailoverServers | null;
  }): Promise<Cell> {
    const destination = await DestinationProcess.start(options.destinationUrl);
    const cell = new Cell(options.fault, options.contract, options.seed, options.engineUrl, options.destinationUrl, destination, options.cluster, options.standbyPair);
    await createStepClass(cell.engine, SCENARIO_CLASS, {
      leaseTtlMs: TIMING.leaseTtlMs,
      renewEveryMs: TIMING.renewEveryMs,
      attemptDeadlineMs: TIMING.attemptDeadlineMs,
      graceMs: TIMING.graceMs,
    });
    // The destination draws its faults from the cell's seed.
    await destination.setFaults({ seed: options.seed });
    return cell;
  }

  /** A uniform integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  inject(kind: string, count = 1): void {
    this.faultsInjected[kind] = (this.faultsInjected[kind] ?? 0) + count;
  }

  note(line: string): void {
    this.notes.push(line);
  }

  excuse(workflowId: string): void {
    this.excused.add(workflowId);
  }

  figure(name: string, value: unknown): void {
    this.figures[name] = value;
  }

  fail(reason: string): void {
    this.failures.push(reason);
  }

  /** Workers are named fl-scn-w<N>: their application_name, so conn-kill can find their backends. */
  spawnWorker(options: Omit<WorkerOptions, "name"> & { role?: string } = {}): Spawned {
    this.workerCount += 1;
    const name = `fl-scn-w${this.workerCount}${options.role ? `-${options.role}` : ""}`;
    const worker = spawnWorker(this.engineUrl, this.destination.url, { ...options, name });
    this.workers.push(worker);
    return worker;
  }

  async ready(...workers: Spawned[]): Promise<void> {
    await Promise.all(workers.map((worker) => worker.waitForLine(/^FENCELINE_WORKER_READY /, 30_000)));
  }

  /** Creates `count` single-step workflows on this cell's contract; returns their step ids. */
  async createWorkflows(count: number): Promise<string[]> {
    const offset = this.workflowIds.length;
    const created = await createWorkflows(
      this.engine,
      Array.from({ length: count }, (_, i) => ({
        kind: "scenario",
        version: 1,
        input: { contract: this.contract, payload: { cell: `${this.fault}/${this.contract}`, n: offset + i, seed: this.seed } },
        requester: "scenario-harness",
        steps: [{ name: "deliver", adapter: this.contract, stepClass: SCENARIO_CLASS }],
      })),
    );
    const stepIds = created.map((workflow) => workflow.stepIds.get("deliver")!);
    this.workflowIds.push(...created.map((workflow) => workflow.workflowId));
    this.stepIds.push(...stepIds);
    return stepIds;
  }

  /** Creates requests of `kind` (version 1), one per input; returns their ids. */
  async createRequests(kind: string, inputs: readonly unknown[]): Promise<string[]> {
    const ids: string[] = [];
    for (const input of inputs) {
      const { request } = await createRequest(this.engine, { kind, version: 1, input, idempotencyKey: null, requester: "scenario-harness", deadlineAt: null });
      ids.push(request.id);
    }
    this.workflowIds.push(...ids);
    return ids;
  }

  /** Creates `scenario-waits` requests (a timer, an event wait, a delivery), one per key. */
  async createWaitRequests(requests: readonly { key: string; sleepMs: number; timeoutMs: number }[]): Promise<string[]> {
    const ids: string[] = [];
    for (const { key, sleepMs, timeoutMs } of requests) {
      const { request } = await createRequest(this.engine, {
        kind: "scenario-waits",
        version: 1,
        input: { contract: this.contract, key, sleepMs, timeoutMs },
        idempotencyKey: null,
        requester: "scenario-harness",
        deadlineAt: null,
      });
      ids.push(request.id);
    }
    this.workflowIds.push(...ids);
    return ids;
  }

  /**
   * Sends `scenario.signal` for `key` as an app would: sent again with the same idempotency key
   * until an answer comes (PostgreSQL may be restarting). Returns the acknowledged event.
   */
  async sendEvent(key: string, idempotencyKey: string, n: number, timeoutMs = 20_000): Promise<SentEvent> {
    const sent = await waitUntil(
      `the signal ${idempotencyKey} to be acknowledged`,
      () => sendEvent(this.engine, { name: SCENARIO_SIGNAL, key, payload: { n }, sender: "scenario-harness", idempotencyKey }),
      timeoutMs,
      200,
    );
    this.signals.push(sent);
    return sent;
  }

  /** The database clock, now. */
  async dbNow(): Promise<Date> {
    const { rows } = await this.engine.query<{ now: Date }>("SELECT clock_timestamp() AS now");
    return rows[0]!.now;
  }

  async count(sql: string, params: unknown[] = []): Promise<number> {
    const { rows } = await this.engine.query<{ n: number }>(sql, params);
    return Number(rows[0]?.n ?? 0);
  }

  /** Steps of this cell that hold an open lease. */
  async leasedSteps(): Promise<number> {
    return this.count(`SELECT count(*)::int AS n FROM lease WHERE ended_at IS NULL AND step_id = ANY($1::uuid[])`, [this.stepIds]);
  }

  /** Settled: every workflow terminal or in open review, and no step leased or waiting to run. */
  async settled(): Promise<boolean> {
    const { rows } = await this.engine.query<{ unsettled: number; busy: number }>(
      `SELECT
         (SELECT count(*)::int FROM workflow w WHERE w.id = ANY($1::uuid[])
            AND w.status NOT IN ('completed', 'failed', 'cancelled')
            AND NOT EXISTS (SELECT 1 FROM review_case c WHERE c.workflow_id = w.id AND c.status = 'open')) AS unsettled,
         (SELECT count(*)::int FROM step s WHERE s.workflow_id = ANY($1::uuid[]) AND s.state IN ('ready', 'leased')) +
         (SELECT count(*)::int FROM lease l WHERE l.ended_at IS NULL) AS busy`,
      [this.workflowIds],
    );
    return rows[0]!.unsettled === 0 && rows[0]!.busy === 0;
  }

  async waitSettled(timeoutMs: number): Promise<boolean> {
    try {
      await waitUntil("the cell to settle", () => this.settled(), timeoutMs, 150);
      return true;
    } catch {
      return false;
    }
  }

  /** Healthy workers: alive, not paused at a hook, not stopped. */
  healthyWorkers(): Spawned[] {
    return this.workers.filter((worker) => worker.alive && !paused.has(worker) && !hung.has(worker));
  }

  stop(worker: Spawned): void {
    paused.add(worker);
    worker.process.kill("SIGSTOP");
  }

  resume(worker: Spawned): void {
    paused.delete(worker);
    worker.process.kill("SIGCONT");
  }

  markHung(worker: Spawned): void {
    hung.add(worker);
  }

  async stopWorkers(): Promise<void> {
    await stopProcesses(this.workers);
  }

  async close(): Promise<void> {
    await stopProcesses(this.workers);
    await this.destination.stop();
    await Promise.allSettled([this.engine.end(), this.destinationPool.end()]);
  }
}

const paused = new WeakSet<Spawned>();
const hung = new WeakSet<Spawned>();
