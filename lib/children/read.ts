/**
 * The tree of requests, as engineers read it: the children a request's steps started, and the
 * step that started a request. Read-only, for the step page, the request page and the API.
 */
import { run } from "@/lib/engine/db";
import type { StaffReadable } from "@/lib/db/read-pool-types";
import type { ChildWaitState } from "./vocabulary";

/** One child of a request: which step started it, its index in that step's list, and how it stands. */
export type ChildOfRequest = {
  readonly stepId: string;
  readonly step: string;
  readonly index: number;
  readonly requestId: string;
  readonly kind: string;
  readonly version: number;
  readonly status: "active" | "completed" | "cancelled" | "failed";
  readonly createdAt: string;
  /** When it ended (ISO 8601, database clock); null while it runs. */
  readonly endedAt: string | null;
};

/** The step (and request) that started a child request. */
export type ParentOfRequest = {
  readonly requestId: string;
  readonly kind: string;
  readonly version: number;
  readonly stepId: string;
  readonly step: string;
  readonly index: number;
  /** How many children the step started, and where its wait stands. */
  readonly siblings: number;
  readonly waitState: ChildWaitState;
};

/** A parent step's wait for its children, as its step page shows it. */
export type ChildWaitView = {
  readonly state: ChildWaitState;
  readonly onChildFailure: "fail" | "collect";
  readonly total: number;
  readonly ended: number;
  readonly failed: number;
  readonly armedAt: string;
  readonly settledAt: string | null;
};

/** The longest list of children one read returns: the fan-out bound. */
const MAX_CHILDREN_READ = 1_000;

const childrenSql = {
  name: "fl_children_of_request",
  text: `
SELECT c.parent_step_id, s.name AS step, c.index, w.id AS request_id, w.kind, w.version, w.status::text, w.created_at, c.ended_at
FROM child_request c JOIN step s ON s.id = c.parent_step_id JOIN workflow w ON w.id = c.child_workflow_id
WHERE c.parent_workflow_id = $1 AND ($2::uuid IS NULL OR c.parent_step_id = $2)
ORDER BY s.position, c.index
LIMIT $3`,
};

const parentSql = {
  name: "fl_parent_of_request",
  text: `
SELECT p.id AS request_id, p.kind, p.version, s.id AS step_id, s.name AS step, c.index, cw.children_total, cw.state::text AS wait_state
FROM child_request c JOIN child_wait cw ON cw.step_id = c.parent_step_id
JOIN step s ON s.id = c.parent_step_id JOIN workflow p ON p.id = c.parent_workflow_id
WHERE c.child_workflow_id = $1`,
};

const waitSql = {
  name: "fl_child_wait_of_step",
  text: `SELECT state::text, on_child_failure, children_total, children_ended, children_failed, armed_at, settled_at FROM child_wait WHERE step_id = $1`,
};

type ChildRow = { parent_step_id: string; step: string; index: number; request_id: string; kind: string; version: number; status: ChildOfRequest["status"]; created_at: Date; ended_at: Date | null };

/** The children started by the steps of request `requestId` (or by its step `stepId` only), in step order then list order; at most 1,000. */
export async function childrenOfRequest(db: StaffReadable, requestId: string, stepId: string | null = null): Promise<ChildOfRequest[]> {
  const rows = await run<ChildRow>(db, childrenSql, [requestId, stepId, MAX_CHILDREN_READ]);
  return rows.map((row) => ({
    stepId: row.parent_step_id,
    step: row.step,
    index: row.index,
    requestId: row.request_id,
    kind: row.kind,
    version: row.version,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    endedAt: row.ended_at?.toISOString() ?? null,
  }));
}

/** The step that started request `requestId`, or null when no step did (it was asked for by an app, a person or a test). */
export async function parentOfRequest(db: StaffReadable, requestId: string): Promise<ParentOfRequest | null> {
  const [row] = await run<{ request_id: string; kind: string; version: number; step_id: string; step: string; index: number; children_total: number; wait_state: ChildWaitState }>(
    db,
    parentSql,
    [requestId],
  );
  if (!row) return null;
  return { requestId: row.request_id, kind: row.kind, version: row.version, stepId: row.step_id, step: row.step, index: row.index, siblings: row.children_total, waitState: row.wait_state };
}

/** The wait of a parent step for its children, or null when the step never started any. */
export async function childWaitOfStep(db: StaffReadable, stepId: string): Promise<ChildWaitView | null> {
  const [row] = await run<{ state: ChildWaitState; on_child_failure: "fail" | "collect"; children_total: number; children_ended: number; children_failed: number; armed_at: Date; settled_at: Date | null }>(
    db,
    waitSql,
    [stepId],
  );
  if (!row) return null;
  return {
    state: row.state,
    onChildFailure: row.on_child_failure,
    total: row.children_total,
    ended: row.children_ended,
    failed: row.children_failed,
    armedAt: row.armed_at.toISOString(),
    settledAt: row.settled_at?.toISOString() ?? null,
  };
}

/** A step's place in the tree of requests: the step that started its request (if one did), and the children it started itself. */
export type StepTree = {
  readonly requestId: string;
  readonly parent: ParentOfRequest | null;
  readonly wait: ChildWaitView | null;
  readonly children: readonly ChildOfRequest[];
};

const stepRequestSql = { name: "fl_request_of_step", text: `SELECT workflow_id FROM step WHERE id = $1` };

/** The tree around step `stepId`, or null when there is no such step. */
export async function stepTree(db: StaffReadable, stepId: string): Promise<StepTree | null> {
  const [step] = await run<{ workflow_id: string }>(db, stepRequestSql, [stepId]);
  if (!step) return null;
  const [parent, wait, children] = await Promise.all([parentOfRequest(db, step.workflow_id), childWaitOfStep(db, stepId), childrenOfRequest(db, step.workflow_id, stepId)]);
  return { requestId: step.workflow_id, parent, wait, children };
}
