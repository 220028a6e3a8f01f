/** The children room's lines on a request's timeline: the child requests a step started; ended, failed or cancelled. */
import { run } from "@/lib/engine/db";
import type { WaitTimeline } from "@/lib/waits/timeline";
import type { ChildWaitState } from "./vocabulary";

type Row = { step_id: string; state: ChildWaitState; children_total: number; children_ended: number; armed_at: Date; settled_at: Date | null };

const childWaitsOfRequest = {
  name: "fl_timeline_child_waits",
  text: `SELECT c.step_id, c.state, c.children_total, c.children_ended, c.armed_at, c.settled_at
FROM child_wait c WHERE c.workflow_id = $1`,
};

const ENDINGS: Record<ChildWaitState, string | null> = { waiting: null, ended: "children ended", failed: "a child failed", cancelled: "cancelled" };

export const childrenTimeline: WaitTimeline = {
  room: "children",
  async linesOf(db, requestId) {
    const rows = await run<Row>(db, childWaitsOfRequest, [requestId]);
    return rows.map((row) => ({
      stepId: row.step_id,
      room: "children",
      startedAt: row.armed_at.toISOString(),
      waitingFor: `${row.children_total} child request${row.children_total === 1 ? "" : "s"} (${row.children_ended} ended)`,
      until: null,
      endedAt: row.settled_at?.toISOString() ?? null,
      ending: ENDINGS[row.state],
    }));
  },
};
