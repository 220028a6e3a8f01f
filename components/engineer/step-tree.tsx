import type { Route } from "next";
import Link from "next/link";
import type { StepTree } from "@/lib/children/read";
import { Time } from "@/components/ui/time";
import { StateBadge } from "./state-badge";

const stepsOf = (requestId: string) => `/steps?workflow=${requestId}` as Route;

/**
 * The tree of requests around a step, for engineers: the step that started its request (when one
 * did), and the child requests this step started, each with how it stands. Nothing when the step
 * is in neither relation.
 */
export function StepTreeSection({ tree }: { tree: StepTree | null }) {
  if (!tree || (tree.parent === null && tree.wait === null)) return null;
  const { parent, wait, children } = tree;
  return (
    <section aria-labelledby="tree" data-testid="step-tree">
      <h2 id="tree">Parent and children</h2>
      {parent ? (
        <p>
          Its request is child {parent.index + 1} of {parent.siblings} started by step{" "}
          <Link href={`/steps/${parent.stepId}` as Route} className="mono">
            {parent.step}
          </Link>{" "}
          of{" "}
          <Link href={stepsOf(parent.requestId)} className="mono">
            {parent.kind}@{parent.version} {parent.requestId.slice(0, 8)}
          </Link>{" "}
          (its wait: {parent.waitState}).
        </p>
      ) : null}
      {wait ? (
        <>
          <p className="muted">
            This step started {wait.total} child request{wait.total === 1 ? "" : "s"}: {wait.ended} ended, {wait.failed} without completing; a failed child{" "}
            {wait.onChildFailure === "fail" ? "fails this step" : "is collected as a result"}. Its wait is <strong>{wait.state}</strong> (armed{" "}
            <Time value={wait.armedAt} precise />
            {wait.settledAt ? (
              <>
                , settled <Time value={wait.settledAt} precise />
              </>
            ) : null}
            ). Each child is (this step, its index): started at most once.
          </p>
          <table>
            <thead>
              <tr>
                <th scope="col">Index</th>
                <th scope="col">Child request</th>
                <th scope="col">Status</th>
                <th scope="col">Ended (database clock)</th>
              </tr>
            </thead>
            <tbody>
              {children.map((child) => (
                <tr key={child.requestId}>
                  <td>{child.index}</td>
                  <td>
                    <Link href={stepsOf(child.requestId)} className="mono">
                      {child.kind}@{child.version} {child.requestId.slice(0, 8)}
                    </Link>
                  </td>
                  <td>
                    <StateBadge state={child.status} />
                  </td>
                  <td>{child.endedAt ? <Time value={child.endedAt} precise /> : <span className="muted">running</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
    </section>
  );
}
