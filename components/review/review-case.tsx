/**
 * One review case: evidence on the left (what was sent, the attempts in plain words, late
 * observations, other steps with the same reference, what the destination can tell us, what the
 * customer sees), the decision on the right.
 */
import type { Route } from "next";
import Link from "next/link";
import { Time } from "@/components/ui/time";
import type { ReviewCaseDetail } from "@/lib/api/contract/support";
import { articleFor } from "@/lib/review/article";
import { OwnershipPanel } from "./ownership-panel";
import { ResolutionPanel } from "./resolution-panel";
import styles from "./review.module.css";

function SentPayload({ sent }: { sent: unknown }) {
  const payload = sent && typeof sent === "object" && "payload" in sent ? (sent as { payload: unknown }).payload : sent;
  if (payload && typeof payload === "object" && !Array.isArray(payload)) {
    return (
      <dl className={styles.facts}>
        {Object.entries(payload as Record<string, unknown>).map(([key, value]) => (
          <div key={key} style={{ display: "contents" }}>
            <dt>{key}</dt>
            <dd>{typeof value === "string" ? value : JSON.stringify(value)}</dd>
          </div>
        ))}
      </dl>
    );
  }
  return <pre className={styles.pre}>{JSON.stringify(sent, null, 2)}</pre>;
}

export function ReviewCase({
  detail,
  viewer,
  colleagues,
  canAct,
}: {
  detail: ReviewCaseDetail;
  /** The signed-in person, as records name them. */
  viewer: string;
  /** Support colleagues the case can be handed to. */
  colleagues: readonly string[];
  /** The viewer may take, hand over, give back and resolve (support role). */
  canAct: boolean;
}) {
  const { case: reviewCase, step, request, destination, customerSees } = detail;
  const heldBy = reviewCase.assignee !== null && reviewCase.assignee !== viewer ? reviewCase.assignee : null;
  return (
    <div className="stack">
      <p>
        <Link href={"/review" as Route}>← Review queue</Link>
      </p>
      <h1>
        Review: {step.name} for <span className="mono">{request.reference}</span>
      </h1>
      <p className="muted">
        {articleFor(request.kind) === "an" ? "An" : "A"} <strong>{request.kind}</strong> request
      </p>
      <p className="row">
        <span className={`badge ${reviewCase.status === "open" ? "warn" : "ok"}`}>{reviewCase.status === "open" ? "Open" : "Resolved"}</span>
        {reviewCase.overdue && <span className="badge bad">Overdue</span>}
        <span>
          Opened <Time value={reviewCase.openedAt} />
        </span>
        {reviewCase.status === "open" && (
          <span className="muted">
            review due <Time value={reviewCase.reviewBy} />
          </span>
        )}
      </p>
      <p>
        <strong>Why it is here:</strong> {reviewCase.reason}
      </p>
      {reviewCase.undoes ? (
        <p data-testid="review-undoes">
          <strong>It undoes</strong> {reviewCase.undoes.step}
          {reviewCase.undoes.externalReference ? (
            <>
              {" "}
              (<code>{reviewCase.undoes.externalReference}</code>)
            </>
          ) : null}
          : the request is being undone. Confirming it delivered means the undo happened; abandoning it ends the request as not completed, never as
          cancelled.
        </p>
      ) : null}

      <div className={styles.columns}>
        <div className="stack">
          <section className="card" aria-labelledby="sent-heading">
            <h2 id="sent-heading">What was sent</h2>
            <p className="muted">
              {step.operation} via <strong>{destination.name}</strong> (version {destination.version}), request identity{" "}
              <code>{step.requestIdentity ?? "none"}</code>
            </p>
            <SentPayload sent={step.sent} />
          </section>

          <section className="card" aria-labelledby="attempts-heading">
            <h2 id="attempts-heading">Attempts</h2>
            <p className="muted">
              {step.attemptsStarted} of {step.attemptBudget} allowed
            </p>
            <ol className={styles.list}>
              {detail.attempts.map((attempt) => (
                <li key={attempt.id}>
                  <Time value={attempt.startedAt} /> — {attempt.summary}
                </li>
              ))}
            </ol>
          </section>

          <section className="card" aria-labelledby="late-heading">
            <h2 id="late-heading">Late observations</h2>
            {detail.lateObservations.length === 0 ? (
              <p className="muted">None: no runner reported anything after losing its authority.</p>
            ) : (
              <ul className={styles.list}>
                {detail.lateObservations.map((observation) => (
                  <li key={observation.id}>
                    <Time value={observation.at} /> — {observation.summary}
                  </li>
                ))}
              </ul>
            )}
          </section>

          <section className="card" aria-labelledby="same-heading">
            <h2 id="same-heading">Same external reference elsewhere</h2>
            {detail.sameReference.length === 0 ? (
              <p className="muted">No other step carries a reference known for this one.</p>
            ) : (
              <ul className={styles.list}>
                {detail.sameReference.map((hit) => (
                  <li key={`${hit.stepId}:${hit.externalReference}`}>
                    <code>{hit.externalReference}</code> on {hit.stepName} of <span className="mono">{hit.reference}</span> ({hit.state})
                  </li>
                ))}
              </ul>
            )}
          </section>

          <section className="card" aria-labelledby="destination-heading">
            <h2 id="destination-heading">What the destination can tell us</h2>
            <ul className={styles.capabilities}>
              {destination.capabilities.map((capability) => (
                <li key={capability.key}>
                  <span className={capability.available ? styles.yes : styles.no} aria-hidden="true">
                    {capability.available ? "✓" : "✗"}
                  </span>
                  <span>
                    <span className="visually-hidden">{capability.available ? "Yes: " : "No: "}</span>
                    {capability.text}
                  </span>
                </li>
              ))}
            </ul>
            {destination.howToCheck && (
              <div data-testid="how-to-check">
                <h3 id="check-heading">How to check it yourself</h3>
                {destination.howToCheck.instructions && <p>{destination.howToCheck.instructions}</p>}
                {destination.howToCheck.url && (
                  <p>
                    <a href={destination.howToCheck.url} target="_blank" rel="noreferrer noopener">
                      Open this request at {destination.name}
                    </a>
                  </p>
                )}
              </div>
            )}
          </section>

          <section className="card" aria-labelledby="customer-heading">
            <h2 id="customer-heading">What the customer sees</h2>
            {customerSees ? (
              <>
                <p>
                  <strong>{customerSees.headline.label}</strong> — {customerSees.happening}
                </p>
                {customerSees.reason && <p>Reason shown: {customerSees.reason}</p>}
              </>
            ) : (
              <p className="muted">The request could not be read.</p>
            )}
          </section>

          <details>
            <summary>Evidence recorded when the case opened</summary>
            <pre className={styles.pre}>{JSON.stringify(reviewCase.evidence, null, 2)}</pre>
          </details>
          <p>
            <Link href={`/steps/${step.id}` as Route}>Technical detail of this step</Link> ·{" "}
            <Link href={`/requests/${request.id}` as Route}>The whole request: timeline and actions</Link>
          </p>
        </div>

        <aside className={`card ${styles.decision}`} aria-labelledby="decision-heading">
          {reviewCase.status === "open" && (
            <OwnershipPanel
              caseId={reviewCase.id}
              version={reviewCase.version}
              assignee={reviewCase.assignee}
              assignedAt={reviewCase.assignedAt}
              viewer={viewer}
              colleagues={colleagues}
              canAct={canAct}
            />
          )}
          <h2 id="decision-heading">Decision</h2>
          <ResolutionPanel
            caseId={reviewCase.id}
            version={reviewCase.version}
            status={reviewCase.status}
            resolution={reviewCase.resolution}
            resolvedBy={reviewCase.resolvedBy}
            resolvedAt={reviewCase.resolvedAt}
            resolutionNote={reviewCase.resolutionNote}
            externalReference={reviewCase.externalReference}
            safeToRetry={destination.safeToRetry}
            destinationName={destination.name}
            // An undo is sent again while its request is being undone (lib/review/sql.ts), as a step of an active request is.
            requestActive={request.status === "active" || (reviewCase.undoes !== null && (request.status === "cancelling" || request.status === "failing"))}
            heldBy={heldBy}
          />
        </aside>
      </div>
    </div>
  );
}
