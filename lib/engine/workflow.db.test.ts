/**
 * Creating workflows: one statement writes workflows, steps and dependency edges; an idempotency
 * key names one workflow however many requests race to create it.
 */
import { expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { claimSteps } from "./lease";
import { commitReceipts } from "./receipt";
import { registerSession } from "./session";
import { createWorkflows, type WorkflowDraft } from "./workflow";

const draft = (key: string | null, input: unknown = { n: 1 }): WorkflowDraft => ({
  kind: "test",
  input,
  requester: "test",
  idempotencyKey: key,
  steps: [
    { name: "first", adapter: "pure", operation: "noop", stepClass: "pure" },
    { name: "second", adapter: "pure", operation: "noop", stepClass: "pure", dependsOn: ["first"] },
  ],
});

test("writes the steps and their dependency edges; a step with a dependency waits blocked", async ({ db }) => {
  const [created] = await createWorkflows(db.pool, [draft(null)]);
  const { rows } = await db.pool.query(
    `SELECT s.name, s.state, s.pending_dependencies, (SELECT array_agg(d.depends_on_step_id) FROM step_dependency d WHERE d.step_id = s.id) AS depends_on
     FROM step s WHERE s.workflow_id = $1 ORDER BY s.position`,
    [created!.workflowId],
  );
  expect(rows).toEqual([
    { name: "first", state: "ready", pending_dependencies: 0, depends_on: null },
    { name: "second", state: "blocked", pending_dependencies: 1, depends_on: [created!.stepIds.get("first")] },
  ]);
});

test("a key used twice in one call names one workflow, created once", async ({ db }) => {
  const [a, b] = await createWorkflows(db.pool, [draft("same-call"), draft("same-call", { n: 2 })]);
  expect(a!.created).toBe(true);
  expect(b).toMatchObject({ workflowId: a!.workflowId, trackingToken: a!.trackingToken, created: false, inputMatches: false });
  const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM step WHERE workflow_id = $1", [a!.workflowId]);
  expect(rows[0].n).toBe(2);
});

test("requests racing with one key all get the same workflow, and only one is written", async ({ db }) => {
  const results = (await Promise.all(Array.from({ length: 8 }, () => createWorkflows(db.pool, [draft("raced")])))).flat();
  expect(new Set(results.map((r) => r.workflowId)).size).toBe(1);
  expect(results.filter((r) => r.created)).toHaveLength(1);
  expect(results.every((r) => r.inputMatches)).toBe(true);
  const { rows } = await db.pool.query(
    "SELECT count(DISTINCT w.id)::int AS workflows, count(s.id)::int AS steps FROM workflow w JOIN step s ON s.workflow_id = w.id WHERE w.idempotency_key = 'raced'",
  );
  expect(rows[0]).toEqual({ workflows: 1, steps: 2 });
});

test("a key committed by another transaction while the create waits on it returns that workflow", async ({ db }) => {
  const holder = await db.pool.connect();
  try {
    await holder.query("BEGIN");
    const { rows } = await holder.query<{ id: string }>(
      `INSERT INTO workflow (kind, input, input_digest, requester, tracking_token, idempotency_key, steps_remaining)
       VALUES ('test', '{}', 'digest', 'test', 'held-token', 'held', 0) RETURNING id`,
    );
    // The create's statement begins before the holder commits, and waits on the key's row.
    const creating = createWorkflows(db.pool, [draft("held")]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await holder.query("COMMIT");
    const [result] = await creating;
    expect(result).toMatchObject({ workflowId: rows[0]!.id, trackingToken: "held-token", created: false });
  } finally {
    holder.release();
  }
});

test("a step claimed after its dependency has that dependency's receipt result and external reference", async ({ db }) => {
  const kind = `deps-${Date.now()}`;
  const [created] = await createWorkflows(db.pool, [{ ...draft(null), kind }]);
  const session = await registerSession(db.pool, "direct");
  const [first] = await claimSteps(db.pool, session, [{ kind, version: 1 }], 1);
  expect(first?.stepId).toBe(created!.stepIds.get("first"));
  const lease = { stepId: first!.stepId, fencingTerm: first!.fencingTerm, sessionId: session };
  const [receipt] = await commitReceipts(db.pool, session, [{ lease, conclusion: { kind: "effect", externalReference: "ext-first", result: { made: 1 }, verification: "direct_response" } }]);
  expect(receipt).toMatchObject({ committed: true });
  const [second] = await claimSteps(db.pool, session, [{ kind, version: 1 }], 1);
  expect(second).toMatchObject({ stepId: created!.stepIds.get("second"), dependencyResults: { first: { made: 1 } }, dependencyReferences: { first: "ext-first" } });
});
