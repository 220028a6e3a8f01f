/**
 * The failover cells: the engine's database is a primary with a streaming standby, promoted by the
 * harness (standby-pair.ts, the quick tier) or by Patroni (patroni-cluster.ts); workers and the harness reach it through a host list with
 * target_session_attrs=read-write. Under traffic the primary is killed (SIGKILL, every process; in
 * the Patroni tier its agent too), the standby is promoted, and nobody tells the processes: their connections fail, new ones find
 * the promoted standby, and the first coordinator to check the database's identity sees the new
 * timeline and runs the epoch transition (lib/engine/epoch-identity.ts).
 *
 * Synchronous: every acknowledged request must be on the standby, and the checker gets them all.
 * Asynchronous: the primary's WAL sender is held for HOLD_MS before the kill, so the last
 * commits are certainly missing after the promotion. A request acknowledged after the last WAL
 * position the standby received may be lost; each lost one is listed with that position and what
 * the destination had seen of it, and only those are left out of invariant 8. A lost request
 * acknowledged at or before that position fails the cell.
 */
import type { Cell } from "./cell";
import { sleep, waitUntil } from "./processes";
import { TIMING } from "./types";
import { claimRetryDelayMs } from "@/lib/worker/worker";

/** How long the asynchronous primary sends no WAL to its standby before it dies. */
const HOLD_MS = 800;
/** How often the harness submits two requests while the cell runs. */
const TRAFFIC_EVERY_MS = 100;

/**
 * Promotion done → first fencing term handed out in the new epoch, for an outage (kill →
 * promotion) of `outageMs`: the identity check of the next recovery pass (scan interval + jitter),
 * the drain (a lease lost with the primary expires after its TTL and the next scan decides it),
 * the installation at the destination, and a claim loop's wait after its last refused claim of the
 * outage (its delays double, so a longer outage leaves a longer one: ≤ 1.6 s after the quick tier's
 * 2 s, the 5 s cap after Patroni's 6 s), plus slack for reconnecting through the host list on a
 * busy machine.
 */
export function failoverRecoveryBoundMs(outageMs: number): number {
  let waited = 0;
  let failures = 0;
  while (waited < outageMs) waited += claimRetryDelayMs(++failures);
  return Math.round(2 * TIMING.scanIntervalMs * 1.1 + TIMING.leaseTtlMs + claimRetryDelayMs(failures) + 2_000);
}

type Acknowledged = { ids: string[]; at: number; lsn: string | null };

/** Two requests every TRAFFIC_EVERY_MS until stopped; each acknowledged batch with the WAL position after its commit. */
function startTraffic(cell: Cell) {
  const acknowledged: Acknowledged[] = [];
  const refused: number[] = [];
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      try {
        const before = cell.workflowIds.length;
        await cell.createWorkflows(2);
        const at = Date.now();
        const ids = cell.workflowIds.slice(before);
        const lsn = await cell.engine
          .query<{ lsn: string }>("SELECT pg_current_wal_insert_lsn()::text AS lsn")
          .then(({ rows }) => rows[0]!.lsn, () => null);
        acknowledged.push({ ids, at, lsn });
      } catch {
        refused.push(Date.now());
      }
      await sleep(TRAFFIC_EVERY_MS);
    }
  })();
  return {
    acknowledged,
    refused,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

/** What a failover cell measured (its `failover` figure), the same for both tiers. */
export type FailoverFigures = {
  tier: "quick" | "patroni";
  replication: "synchronous" | "asynchronous";
  /** Last write acknowledged by the old primary → first by the promoted standby (a client's pause). */
  writePauseMs: number | null;
  /** Kill → the standby takes writes: `pg_ctl promote` (quick), or Patroni's detection and promotion. */
  promotionMs: number;
  /** Promotion → the first fencing term handed out in the new epoch. */
  firstTermInNewEpochAfterPromotionMs: number;
  /** Kill → the first fencing term handed out in the new epoch. */
  firstTermInNewEpochAfterKillMs: number;
  /** That first term: epoch and version. */
  firstTermInNewEpoch: { epoch: string; term: string };
  recoveryBoundMs: number;
  /** The automatic transition; its start and end after the promotion show where the recovery time goes. */
  transition: { reason: string; state: string; toEpoch: string; auditEntries: number; beganAfterPromotionMs: number; finishedAfterPromotionMs: number };
  standbyReceivedLsn: string;
  acknowledged: number;
  refusedDuringFailover: number;
  lostRequests: number;
};

/**
 * The failover's own verdict, one list for both tiers, run by the fault script and by
 * failover.scenario.test.ts: one audited, completed transition for the timeline's move, the first
 * term of the new epoch within the bound, and the loss the replication mode allows (synchronous:
 * none; asynchronous: some, since the WAL sender was held — each one explained by the script).
 */
export function failoverFindings(figures: FailoverFigures): string[] {
  const findings: string[] = [];
  const { transition } = figures;
  if (transition.auditEntries !== 1) findings.push(`the automatic epoch transition has ${transition.auditEntries} audit entries, not 1`);
  if (transition.state !== "completed") findings.push(`the automatic epoch transition ended ${transition.state}`);
  if (!/^database identity changed: system \d+ timeline 1 → 2$/.test(transition.reason)) findings.push(`unexpected transition reason: ${transition.reason}`);
  if (figures.firstTermInNewEpochAfterPromotionMs > figures.recoveryBoundMs) {
    findings.push(`first term in the new epoch ${figures.firstTermInNewEpochAfterPromotionMs} ms after the promotion, above the bound ${figures.recoveryBoundMs} ms`);
  }
  if (figures.replication === "synchronous" && figures.lostRequests !== 0) findings.push(`the synchronous standby lost ${figures.lostRequests} acknowledged request(s)`);
  if (figures.replication === "asynchronous" && figures.lostRequests === 0) findings.push("the held WAL sender lost nothing: the cell did not exercise an asynchronous loss");
  return findings;
}

/** The failover cells' fault script, for either tier (the cell's servers decide which). */
export function failover(synchronous: boolean) {
  return async (cell: Cell): Promise<void> => {
    const servers = cell.standbyPair;
    if (!servers) throw new Error("a failover cell needs a primary and a standby");
    const workers = [cell.spawnWorker({ concurrency: 4 }), cell.spawnWorker({ concurrency: 4 })];
    for (const worker of workers) cell.mustSurvive.add(worker);
    await cell.ready(...workers);
    // Requests in flight at the destination while the primary dies.
    await cell.destination.setFaults({ seed: cell.seed, kinds: { [cell.contract]: { latency: { fixedMs: 200, jitterMs: 600 } } } });
    const traffic = startTraffic(cell);
    await waitUntil("work in flight", async () => (await cell.count(`SELECT count(*)::int AS n FROM attempt WHERE checkpoint = 'invocation_began'`)) >= 2, 30_000, 50);

    if (!synchronous) {
      await servers.holdReplication(true);
      cell.inject("replication-held");
      await sleep(HOLD_MS);
    }
    const killedAt = Date.now();
    await servers.killPrimary();
    cell.inject("primary-sigkill");
    // Whatever reached the standby's socket before the kill is still received.
    await sleep(200);
    const receivedLsn = await servers.standbyReceivedLsn();
    await servers.promote();
    const promotedAt = Date.now();
    cell.inject("promotion");

    const transition = await waitUntil(
      "the epoch transition after the failover",
      async () => {
        const { rows } = await cell.engine.query<{ reason: string; state: string; to_epoch: string; started_at: Date; finished_at: Date; first_term_at: Date | null; first_term: string | null }>(
          `SELECT t.reason, t.state, t.to_epoch::text, t.started_at, t.finished_at, first.leased_at AS first_term_at, first.fencing_term::text AS first_term
           FROM epoch_transition t
           LEFT JOIN LATERAL (SELECT l.leased_at, l.fencing_term FROM lease l WHERE l.epoch = t.to_epoch ORDER BY l.leased_at LIMIT 1) first ON true
           WHERE t.reason LIKE 'database identity changed%' AND t.finished_at IS NOT NULL`,
        );
        const row = rows[0];
        return row?.first_term_at ? { ...row, first_term_at: row.first_term_at, first_term: row.first_term! } : undefined;
      },
      30_000,
      50,
    );
    cell.inject("epoch-transition");
    await sleep(1_000);
    await traffic.stop();
    await cell.destination.setFaults({ seed: cell.seed });

    // The longest a client waited between two acknowledged writes: the last on the old primary
    // (some are acknowledged just after the kill, having committed before it) → the first on the new.
    const gaps = traffic.acknowledged.slice(1).map((batch, i) => batch.at - traffic.acknowledged[i]!.at);
    const auditEntries = await cell.count(`SELECT count(*)::int AS n FROM audit_log WHERE action = 'epoch.transition' AND after ->> 'reason' = $1`, [transition.reason]);

    const lost = await lostRequests(cell, traffic.acknowledged, receivedLsn);
    for (const request of lost) {
      if (!synchronous && !request.afterReceived) cell.fail(`workflow ${request.workflowId} acknowledged at ${request.lsn}, at or before the standby's ${receivedLsn}, is lost`);
      else if (!synchronous) cell.excuse(request.workflowId);
      const when = request.afterReceived ? "after" : "at or before";
      cell.note(`lost: workflow ${request.workflowId} acknowledged at WAL ${request.lsn ?? "(unread)"}, ${when} the standby's last received ${receivedLsn}; ${request.atDestination}`);
    }
    const figures: FailoverFigures = {
      tier: servers.tier,
      replication: synchronous ? "synchronous" : "asynchronous",
      writePauseMs: gaps.length === 0 ? null : Math.max(...gaps),
      promotionMs: promotedAt - killedAt,
      firstTermInNewEpochAfterPromotionMs: transition.first_term_at.getTime() - promotedAt,
      firstTermInNewEpochAfterKillMs: transition.first_term_at.getTime() - killedAt,
      firstTermInNewEpoch: { epoch: transition.to_epoch, term: transition.first_term },
      recoveryBoundMs: failoverRecoveryBoundMs(promotedAt - killedAt),
      transition: {
        reason: transition.reason,
        state: transition.state,
        toEpoch: transition.to_epoch,
        auditEntries,
        beganAfterPromotionMs: transition.started_at.getTime() - promotedAt,
        finishedAfterPromotionMs: transition.finished_at.getTime() - promotedAt,
      },
      standbyReceivedLsn: receivedLsn,
      acknowledged: traffic.acknowledged.reduce((sum, batch) => sum + batch.ids.length, 0),
      refusedDuringFailover: traffic.refused.length,
      lostRequests: lost.length,
    };
    for (const finding of failoverFindings(figures)) cell.fail(finding);
    cell.figure("failover", figures);
  };
}

type Lost = { workflowId: string; lsn: string | null; afterReceived: boolean; atDestination: string };

/** Acknowledged workflows the promoted standby does not have, each with what explains it. */
async function lostRequests(cell: Cell, acknowledged: readonly Acknowledged[], receivedLsn: string): Promise<Lost[]> {
  const all = acknowledged.flatMap((batch) => batch.ids.map((id) => ({ id, lsn: batch.lsn })));
  const { rows } = await cell.engine.query<{ id: string }>(`SELECT id FROM workflow WHERE id = ANY($1::uuid[])`, [all.map((entry) => entry.id)]);
  const present = new Set(rows.map((row) => row.id));
  const missing = all.filter((entry) => !present.has(entry.id));
  const lost: Lost[] = [];
  for (const entry of missing) {
    const stepId = cell.stepIds[cell.workflowIds.indexOf(entry.id)]!;
    const { rows: after } = await cell.engine.query<{ after: boolean | null }>(`SELECT $1::pg_lsn > $2::pg_lsn AS after`, [entry.lsn, receivedLsn]);
    const { rows: effects } = await cell.destinationPool.query<{ epoch: string | null; term: string | null }>(
      `SELECT epoch::text, term::text FROM destination.effect WHERE request_identity = $1`,
      [`fl-${stepId}`],
    );
    lost.push({
      workflowId: entry.id,
      lsn: entry.lsn,
      // An unread position was taken after the kill: the commit was the last one, after anything sent.
      afterReceived: after[0]?.after ?? true,
      atDestination:
        effects.length === 0
          ? "no worker had reached the destination with it"
          : `its effect had been applied at the destination (${effects.map((e) => `epoch ${e.epoch ?? "-"} term ${e.term ?? "-"}`).join(", ")}), a request Fenceline no longer knows`,
    });
  }
  return lost;
}
