"use client";

import type { StepDetail } from "@/lib/api/contract/engineer/steps";
import { Time } from "@/components/ui/time";
import { shortId } from "./api";

/**
 * One sentence on what the step is waiting for right now, from its records alone: a lease and
 * its checkpoint, a wait, a person, or nothing. It states facts; it never guesses what a
 * destination did.
 */
export function StepNow({ detail }: { detail: StepDetail }) {
  const { step, workflow } = detail;
  const unserved = workflow.servedBy === 0 ? `no worker serves ${workflow.kind}@${workflow.version}` : null;
  const openLease = detail.leases.find((l) => l.endedAt === null);
  const attempt = detail.attempts.at(-1);
  const openReview = detail.reviewCases.find((c) => c.status === "open");
  const receipt = detail.receipts[0];
  let sentence: React.ReactNode;
  if (receipt) {
    sentence = (
      <>
        Receipted: verified by {receipt.verificationMethod.replaceAll("_", " ")} under term {receipt.fencingTerm}, <Time value={receipt.createdAt} />.
      </>
    );
  } else if (openReview) {
    sentence = <>Outcome unknown: a review case is open ({openReview.reason}); only a person can settle it.</>;
  } else if (openLease && new Date(openLease.expiresAt) > new Date(detail.dbNow)) {
    sentence = (
      <>
        Term {openLease.fencingTerm} is held by session <span className="mono">{shortId(openLease.ownerSessionId)}</span>
        {attempt ? <>, at checkpoint &ldquo;{attempt.checkpoint.replaceAll("_", " ")}&rdquo;</> : null}; the lease expires{" "}
        <Time value={openLease.expiresAt} /> unless renewed.
      </>
    );
  } else if (openLease) {
    sentence = <>Term {openLease.fencingTerm} is past its expiry on the database clock; the recovery scan has not observed it yet.</>;
  } else if (step.state === "ready" && unserved) {
    sentence = <>Waiting to be claimed, but {unserved}: start a worker that serves it. No lease is held while it waits.</>;
  } else if (step.state === "ready" && step.nextEligibleAt === null) {
    sentence = <>Queued behind its concurrency key{step.stateReason ? ` (${step.stateReason})` : ""}: it is let in when one of the key&apos;s steps ends. No lease is held while it waits.</>;
  } else if (step.state === "ready") {
    sentence = (
      <>
        Waiting to be claimed ({step.nextMode.replaceAll("_", " ")}), eligible <Time value={step.nextEligibleAt} />. No lease is held while it waits.
      </>
    );
  } else if (step.state === "waiting" && detail.wait?.room === "timer") {
    sentence = <>Waiting for a time: the timer fires <Time value={detail.wait.dueAt} /> on the database clock. No lease is held while it waits.</>;
  } else if (step.state === "waiting" && detail.wait?.room === "event") {
    const { name, key, timeoutAt } = detail.wait;
    sentence = (
      <>
        Waiting for the event <span className="mono">{name}</span> with key <span className="mono">{key}</span>
        {timeoutAt ? <>, until <Time value={timeoutAt} /></> : null}. No lease is held while it waits.
      </>
    );
  } else if (step.state === "waiting") {
    // A room without a wait view of its own (child requests: the tree below says which).
    sentence = <>Waiting{step.stateReason ? ` (${step.stateReason})` : ""}: its room settles it. No lease is held while it waits.</>;
  } else if (step.state === "blocked") {
    sentence = <>Waiting for the steps it depends on to be receipted.</>;
  } else {
    sentence = <>Ended {step.state.replaceAll("_", " ")}{step.stateReason ? `: ${step.stateReason}` : ""}.</>;
  }
  return (
    <p className="card">
      <strong>Now: </strong>
      {sentence}
    </p>
  );
}
