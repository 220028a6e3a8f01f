/**
 * Runs cells: fault × contract, each in fresh databases with its own destination process and
 * worker processes. A cell = open → fault script → settle → stop every process → independent
 * checker → figures. Seeds are derived, so one cell can be replayed alone with the same seed.
 */
import { resolveDatabaseUrl } from "@/lib/db/database";
import { prepareTemplate } from "@/lib/db/test-template";
import { Cell } from "./cell";
import { checkInvariants } from "./checker";
import { cellDatabases, ThrowawayCluster } from "./cluster";
import { PatroniCluster } from "./patroni-cluster";
import { StandbyPair, type FailoverServers } from "./standby-pair";
import { measuresLatency, mustRejectStaleWrites, scripts } from "./faults";
import { summarizeLatency } from "./report";
import { appliesTo, CONTRACTS, failoverTier, FAULTS, isFailover, isSynchronousFailover, recoveryBoundMs, type CellResult, type Contract, type FaultKind } from "./types";

export type Environment = {
  /** URL of the `postgres` database on the server that holds cell databases and the template. */
  serverUrl: string;
  /** Started on first use by a cell that restarts PostgreSQL (db-restart, waits). */
  cluster(): Promise<ThrowawayCluster>;
  close(): Promise<void>;
};

/**
 * The PostgreSQL server the project uses (DATABASE_URL's, else the embedded cluster), with the
 * migrated template ready. `prepared` skips the template step (vitest's global setup did it).
 */
export async function openEnvironment(options: { serverUrl?: string; prepared?: boolean } = {}): Promise<Environment> {
  let stopServer = async () => {};
  let serverUrl = options.serverUrl;
  if (!serverUrl) {
    const resolved = await resolveDatabaseUrl({ database: "postgres" });
    serverUrl = resolved.url;
    stopServer = resolved.stop;
  }
  if (!options.prepared) await prepareTemplate(serverUrl);
  let cluster: Promise<ThrowawayCluster> | null = null;
  return {
    serverUrl,
    cluster: () => (cluster ??= ThrowawayCluster.start()),
    close: async () => {
      // A cell still open was abandoned (a test's timeout does not stop its promise): its workers,
      // some paused at a checkpoint for ever, are stopped here rather than left behind.
      await Promise.allSettled([...openCells].map((cell) => cell.close()));
      openCells.clear();
      if (cluster) await (await cluster.catch(() => null))?.destroy();
      await stopServer();
    },
  };
}

/** A 32-bit seed from a parent seed and labels (FNV-1a), stable across runs and platforms. */
export function deriveSeed(seed: number, ...labels: string[]): number {
  let hash = 0x811c9dc5 ^ (seed >>> 0);
  for (const char of labels.join("/")) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

export const replayCommand = (fault: FaultKind, contract: Contract, runSeed: number) =>
  `npm run scenarios -- --only ${fault} --contract ${contract} --seed ${runSeed}`;

/** Cells between their open and their close, in this process (see `Environment.close`). */
const openCells = new Set<Cell>();

/** Generous: a held adapter permit (unknown outcome) keeps a step waiting for tens of seconds. */
const SETTLE_TIMEOUT_MS = 90_000;

export async function runCell(environment: Environment, fault: FaultKind, contract: Contract, runSeed: number, log: (line: string) => void = () => {}): Promise<CellResult> {
  const startedAt = Date.now();
  const seed = deriveSeed(runSeed, fault, contract);
  const cluster = fault === "db-restart" || fault === "waits" ? await environment.cluster() : null;
  // A failover leaves its primary dead: every failover cell gets a pair of its own.
  const standbyPair = isFailover(fault) ? await startFailoverServers(fault) : null;
  const engineServerUrl = standbyPair?.primaryServerUrl ?? cluster?.serverUrl ?? environment.serverUrl;
  const databases = await cellDatabases(environment.serverUrl, `${fault.replaceAll("-", "_")}_${contract}`, engineServerUrl).catch(async (error: unknown) => {
    await standbyPair?.destroy();
    throw error;
  });
  const engineUrl = standbyPair ? standbyPair.hostList(databases.engineUrl) : databases.engineUrl;
  let cell: Cell | null = null;
  const harnessErrors: string[] = [];
  try {
    cell = await Cell.open({ fault, contract, seed, engineUrl, destinationUrl: databases.destinationUrl, cluster, standbyPair });
    openCells.add(cell);
    try {
      await scripts[fault](cell);
    } catch (error) {
      harnessErrors.push(`fault script failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    // Whatever the script left, a healthy worker finishes the work.
    if (cell.healthyWorkers().length === 0) {
      const finisher = cell.spawnWorker({ role: "finisher" });
      await cell.ready(finisher).catch((error: unknown) => harnessErrors.push(`finisher did not start: ${String(error)}`));
    }
    const settled = await cell.waitSettled(SETTLE_TIMEOUT_MS);
    if (!settled) harnessErrors.push(`did not settle within ${SETTLE_TIMEOUT_MS / 1000} s`);
    for (const worker of cell.mustSurvive) {
      if (!worker.alive) {
        const { code, signal } = await worker.exited;
        const tail = worker.tail(40);
        const cause = tail.split("\n").reverse().find((line) => /\b\w*Error\b:/.test(line))?.replace(/^\[err\]\s*/, "") ?? "see output";
        harnessErrors.push(`worker ${worker.name} died during the fault (code ${code}, signal ${signal}): ${cause}; last output:\n${tail}`);
      }
    }
    await cell.stopWorkers();
    return await finish(cell, fault, contract, seed, runSeed, startedAt, harnessErrors);
  } catch (error) {
    harnessErrors.push(`harness error: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
    log(`${fault}/${contract}: ${harnessErrors.at(-1)}`);
    return {
      fault, contract, seed, passed: false, failures: harnessErrors, invariants: [], durationMs: Date.now() - startedAt, detail: {},
      replay: replayCommand(fault, contract, runSeed), workflows: cell?.workflowIds.length ?? 0, faultsInjected: cell?.faultsInjected ?? {},
      staleWritesRejected: 0, staleWritesAccepted: 0, duplicateEffects: 0, lostRequests: 0, unknownOutsideReview: 0,
      recoveryLatencyMs: summarizeLatency([], recoveryBoundMs()), latencySamples: [],
    };
  } finally {
    if (cell) openCells.delete(cell);
    await cell?.close().catch(() => undefined);
    if (process.env.FENCELINE_SCENARIO_KEEP_DATABASES !== "1") await databases.drop();
    else log(`kept databases ${databases.engineUrl} ${databases.destinationUrl}`);
    await standbyPair?.destroy();
  }
}

function startFailoverServers(fault: FaultKind): Promise<FailoverServers> {
  const synchronous = isSynchronousFailover(fault);
  return failoverTier(fault) === "patroni" ? PatroniCluster.start({ synchronous }) : StandbyPair.start({ synchronous });
}

async function finish(
  cell: Cell,
  fault: FaultKind,
  contract: Contract,
  seed: number,
  runSeed: number,
  startedAt: number,
  harnessErrors: string[],
): Promise<CellResult> {
  const acknowledgedWorkflowIds = cell.workflowIds.filter((id) => !cell.excused.has(id));
  const checked = await checkInvariants({ engine: cell.engine, destination: cell.destinationPool, acknowledgedWorkflowIds });
  const bound = recoveryBoundMs();
  const samples = measuresLatency.has(fault) ? await latencySamples(cell) : [];
  const latency = summarizeLatency(samples, bound);
  const failures = [...harnessErrors, ...cell.failures];
  for (const invariant of checked.invariants) {
    if (!invariant.passed) failures.push(`invariant ${invariant.id} (${invariant.name}): ${invariant.violations} violation(s): ${JSON.stringify(invariant.witnesses)}`);
  }
  if (mustRejectStaleWrites.has(fault) && checked.staleWritesRejected === 0) failures.push("no stale write was attempted and rejected: the fault did not exercise the fence");
  if (latency.max !== null && latency.max > bound) failures.push(`recovery latency ${latency.max} ms exceeds the bound ${bound} ms`);
  if (measuresLatency.has(fault) && samples.length === 0) failures.push("no recovery latency sample: no expired lease was recovered");
  if (Object.values(cell.faultsInjected).every((n) => n === 0)) failures.push("no fault was injected");
  return {
    fault,
    contract,
    seed,
    passed: failures.length === 0,
    failures,
    invariants: checked.invariants,
    durationMs: Date.now() - startedAt,
    workflows: cell.workflowIds.length,
    faultsInjected: cell.faultsInjected,
    staleWritesRejected: checked.staleWritesRejected,
    staleWritesAccepted: checked.staleWritesAccepted,
    duplicateEffects: checked.duplicateEffects,
    lostRequests: checked.lostRequests,
    unknownOutsideReview: checked.unknownOutsideReview,
    recoveryLatencyMs: latency,
    latencySamples: samples,
    detail: { ...checked.detail, ...cell.figures, ...(cell.notes.length > 0 ? { notes: cell.notes } : {}) },
    replay: replayCommand(fault, contract, runSeed),
  };
}

/** Fault moment → first expiry decision for that (step, term), both on the database clock. */
async function latencySamples(cell: Cell): Promise<number[]> {
  if (cell.latencyProbes.length === 0) return [];
  const { rows } = await cell.engine.query<{ ms: number }>(
    `SELECT extract(epoch FROM (min(d.decided_at) - p.fault_at)) * 1000 AS ms
     FROM unnest($1::uuid[], $2::bigint[], $3::timestamptz[]) AS p(step_id, term, fault_at)
     JOIN recovery_decision d ON d.step_id = p.step_id AND d.fencing_term = p.term AND d.trigger = 'lease_expired'
     GROUP BY p.step_id, p.term, p.fault_at`,
    [cell.latencyProbes.map((p) => p.stepId), cell.latencyProbes.map((p) => p.term), cell.latencyProbes.map((p) => p.faultAt)],
  );
  return rows.map((row) => Math.round(Number(row.ms)));
}

export type Selection = { faults: readonly FaultKind[]; contracts: readonly Contract[] };
export const everything: Selection = { faults: FAULTS, contracts: CONTRACTS };

export async function runMatrix(
  environment: Environment,
  selection: Selection,
  runSeed: number,
  options: { parallel?: number; onCell?: (result: CellResult) => void; log?: (line: string) => void } = {},
): Promise<CellResult[]> {
  const queue = selection.faults.flatMap((fault) => selection.contracts.filter((contract) => appliesTo(fault, contract)).map((contract) => ({ fault, contract })));
  const results: CellResult[] = new Array(queue.length);
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, options.parallel ?? 1) }, async () => {
    while (next < queue.length) {
      const index = next++;
      const { fault, contract } = queue[index]!;
      const result = await runCell(environment, fault, contract, runSeed, options.log);
      results[index] = result;
      options.onCell?.(result);
    }
  });
  await Promise.all(lanes);
  return results;
}
