/**
 * Each engine behind one small interface the scorecard's runs drive: enqueue logical jobs, start a
 * worker process in a slot of the fleet, tell from a worker's output which jobs it has begun
 * calling the destination for (to place a fault while the calls are in flight), and read what the
 * engine itself says became of each job. Fenceline runs its real worker (`lib/cli/worker.ts`);
 * the peers run lib/bench/scorecard/peer-worker.ts.
 */
import type pg from "pg";
import { createPool } from "@/lib/db/pool";
import { createWorkflows } from "@/lib/engine/workflow";
import { checkpointLine, parseCheckpoint, spawnWorker } from "@/lib/scenarios/processes";
import { spawnNodeProcess, type Spawned } from "@/lib/worker/test-process";
import { SCORECARD_CLASS, SCORECARD_KIND } from "./definitions";
import { openPeer, type PeerEngine, type PeerWorkerOptions } from "./peers";
import type { EngineOutcome, LogicalJob, ScorecardEngine } from "./types";

export type EngineDriver = {
  readonly engine: ScorecardEngine;
  /** Settings as a reader would repeat them. */
  readonly settings: string;
  /** The line a worker process prints once it serves. */
  readonly readyLine: RegExp;
  enqueue(jobs: readonly LogicalJob[]): Promise<void>;
  /** A worker process for `slot`; a restarted worker gets the same slot. */
  spawnWorker(slot: string): Spawned;
  /** Jobs whose effect call `worker` has begun, by its own output. */
  calling(worker: Spawned): Set<number>;
  /** What the engine's tables say of every job enqueued so far. */
  outcomes(): Promise<Map<number, EngineOutcome>>;
  close(): Promise<void>;
};

export type DriverOptions = {
  /** The engine's own fresh database. */
  readonly engineUrl: string;
  readonly destinationUrl: string;
  /** Effect calls one worker runs at once. */
  readonly concurrency: number;
};

export function openDriver(engine: ScorecardEngine, options: DriverOptions): Promise<EngineDriver> {
  return engine === "fenceline" ? openFenceline(options) : openPeerDriver(engine, options);
}

const FENCELINE_DEFINITIONS = "lib/bench/scorecard/definitions.ts";
/** The worker's defaults (lib/cli/worker.ts): the scorecard runs Fenceline as an adopter gets it. */
const FENCELINE_RECOVERY_INTERVAL_MS = 1_000;
const FENCELINE_POLL_INTERVAL_MS = 1_000;

async function openFenceline({ engineUrl, destinationUrl, concurrency }: DriverOptions): Promise<EngineDriver> {
  const pool: pg.Pool = createPool(engineUrl, { applicationName: "scorecard-harness", max: 2 });
  const jobOfStep = new Map<string, number>();
  const jobOfWorkflow = new Map<string, number>();
  const invoked = checkpointLine("invocation_began");
  return {
    engine: "fenceline",
    settings:
      `workflow of one step on the default class for external calls (lease TTL 10 s, renewed every 3 s), worker defaults (recovery scan every 1 s), ` +
      `concurrency ${concurrency}; the demo's adapters and their contracts`,
    readyLine: /^FENCELINE_WORKER_READY /,
    enqueue: async (jobs) => {
      const created = await createWorkflows(
        pool,
        jobs.map((job) => ({
          kind: SCORECARD_KIND,
          version: 1,
          input: { contract: job.contract, payload: job.payload },
          requester: "scorecard",
          steps: [{ name: "deliver", adapter: job.contract, stepClass: SCORECARD_CLASS }],
        })),
      );
      created.forEach((workflow, i) => {
        jobOfWorkflow.set(workflow.workflowId, jobs[i]!.n);
        jobOfStep.set(workflow.stepIds.get("deliver")!, jobs[i]!.n);
      });
    },
    spawnWorker: (slot) =>
      spawnWorker(engineUrl, destinationUrl, {
        name: `fl-scorecard-${slot}`,
        concurrency,
        recoveryIntervalMs: FENCELINE_RECOVERY_INTERVAL_MS,
        extraEnv: { FENCELINE_DEFINITIONS, FENCELINE_POLL_INTERVAL_MS: String(FENCELINE_POLL_INTERVAL_MS) },
      }),
    calling: (worker) => new Set(worker.linesMatching(invoked).flatMap((line) => jobOfStep.get(parseCheckpoint(line).stepId) ?? [])),
    outcomes: async () => {
      const { rows } = await pool.query<{ id: string; status: string; in_review: boolean }>(
        `SELECT w.id, w.status::text AS status,
                EXISTS (SELECT 1 FROM review_case c WHERE c.workflow_id = w.id AND c.status = 'open') AS in_review
           FROM workflow w WHERE w.id = ANY($1::uuid[])`,
        [[...jobOfWorkflow.keys()]],
      );
      const outcomes = new Map<number, EngineOutcome>([...jobOfWorkflow.values()].map((n) => [n, "unsettled"]));
      for (const row of rows) {
        // A failed or cancelled request is reported to its requester; an open review case waits for staff.
        const outcome: EngineOutcome = row.status === "completed" ? "completed" : row.in_review || row.status === "failed" || row.status === "cancelled" ? "withPerson" : "unsettled";
        outcomes.set(jobOfWorkflow.get(row.id)!, outcome);
      }
      return outcomes;
    },
    close: () => pool.end(),
  };
}

const CALLING = /^SCORECARD_CALLING (\d+) (\d+)$/;

async function openPeerDriver(engine: PeerEngine, { engineUrl, destinationUrl, concurrency }: DriverOptions): Promise<EngineDriver> {
  const peer = await openPeer(engine, engineUrl, concurrency);
  const ids = new Map<number, string>();
  return {
    engine,
    settings: peer.settings,
    readyLine: /^SCORECARD_WORKER_READY$/,
    enqueue: async (jobs) => {
      for (const [n, id] of await peer.enqueue(jobs)) ids.set(n, id);
    },
    spawnWorker: (slot) => {
      const options: PeerWorkerOptions = { engine, databaseUrl: engineUrl, slot, concurrency };
      return spawnNodeProcess(`${engine}-${slot}`, "lib/bench/scorecard/peer-worker.ts", {
        SCORECARD_PEER_WORKER: JSON.stringify(options),
        FENCELINE_DESTINATION_URL: destinationUrl,
      });
    },
    calling: (worker) => new Set(worker.linesMatching(CALLING).map((line) => Number(CALLING.exec(line)![1]))),
    outcomes: () => peer.outcomes(ids),
    close: () => peer.close(),
  };
}
