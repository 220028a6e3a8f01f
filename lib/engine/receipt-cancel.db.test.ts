/**
 * A receipt and a cancel of its request are ordered, whatever their timing: the model test
 * (lib/model) found a receipt that read its request as active, waited for the cancel's lock on the
 * request's row, and then completed the last step of the request the cancel had just ended, a
 * completed step in a cancelled request that neither order explains. Here the cancel is held
 * open until the receipt is waiting for it, then committed: the receipt must be refused, as if
 * the cancel had come first.
 */
import { expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { run } from "./db";
import { claimSteps } from "./lease";
import { commitReceipts } from "./receipt";
import { registerSession } from "./session";
import * as sql from "./sql/workflow";
import { createSingleStepWorkflows, servedFor } from "./test-support";

test("a receipt waiting on a cancel that commits is refused: the request ends cancelled, its step never completed", async ({ db }) => {
  const [stepId] = await createSingleStepWorkflows(db.pool, 1, { adapter: "pure", operation: "noop", stepClass: "pure" });
  const session = await registerSession(db.pool, "direct");
  const [claimed] = await claimSteps(db.pool, session, servedFor("pure"), 1);
  expect(claimed!.stepId).toBe(stepId);

  const canceller = await db.pool.connect();
  try {
    await canceller.query("BEGIN");
    expect(await run(canceller, sql.cancelWorkflow, [claimed!.workflowId, "customer cancelled", null])).toHaveLength(1);
    const receipt = commitReceipts(db.pool, session, [{ lease: { stepId: stepId!, fencingTerm: claimed!.fencingTerm, sessionId: session }, conclusion: { kind: "no_action_needed", reason: "done" } }]);
    // The receipt has read the request as active and now waits for the cancel's lock on its row.
    for (;;) {
      const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
      if (rows[0].n > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await run(canceller, sql.cancelIdleSteps, [claimed!.workflowId, "customer cancelled"]);
    await canceller.query("COMMIT");

    const [result] = await receipt;
    expect(result).toMatchObject({ committed: false, error: { reason: "workflow_inactive" } });
  } finally {
    canceller.release();
  }
  const { rows } = await db.pool.query(
    `SELECT s.state::text AS step, w.status::text AS request, (SELECT count(*)::int FROM receipt_step r WHERE r.step_id = s.id) AS receipts
     FROM step s JOIN workflow w ON w.id = s.workflow_id WHERE s.id = $1`,
    [stepId],
  );
  expect(rows[0]).toEqual({ step: "leased", request: "cancelled", receipts: 0 });
});
