/**
 * The metrics, in families that are never summed into one "failures" figure:
 *
 * - Lease churn: how often authority changes hands. Infrastructure health; churn alone is not
 *   customer impact (an expiry followed by a safe retry costs latency, not correctness).
 * - Outcome uncertainty: how much of what happened at destinations we do not yet know, and how
 *   long it takes to know it. Customer risk.
 * - Waits: steps that wait for a time or an event (lib/timers, lib/events), the events that
 *   arrive for them, and how punctually timers fire. A wait is neither churn nor uncertainty: a
 *   waiting step holds no lease and nothing is unknown about it.
 *
 * Each metric carries its written definition, shown beside its chart and as Prometheus HELP.
 */
import { RECOVERY_CATEGORIES, REJECTION_REASONS } from "@/lib/engine/vocabulary";
import type { NamedSql } from "@/lib/engine/db";
import { waitRooms } from "@/lib/waits/rooms";
import * as waitsSql from "@/lib/waits/sql";
import * as sql from "./sql";

export type MetricFamily = "churn" | "uncertainty" | "waits";

/** count: events per bucket (summed over the range); seconds: a statistic of durations; gauge: a level at the bucket's end. */
export type MetricKind = "count" | "seconds" | "gauge";

export type MetricDefinition = {
  readonly id: string;
  readonly family: MetricFamily;
  readonly title: string;
  readonly unit: string;
  readonly kind: MetricKind;
  readonly definition: string;
  /** The series, in display order; each becomes a Prometheus label value of `label`. */
  readonly keys: readonly string[];
  readonly label: string | null;
  /** Run once per read however many metrics share it; a sharing metric takes only its keys' rows. */
  readonly statement: NamedSql;
  /** The filtered step list behind the metric, for a range. */
  readonly list: ((range: { from: string; to: string }) => string) | null;
  /** The filtered step list behind one series (key), where the list can filter by it. */
  readonly keyList?: (key: string, range: { from: string; to: string }) => string | null;
};

const stepsWith = (filter: Record<string, string>) => (range: { from: string; to: string }) =>
  `/steps?${new URLSearchParams({ ...filter, from: range.from, to: range.to }).toString()}`;

export const METRICS: readonly MetricDefinition[] = [
  {
    id: "lease_acquisitions",
    family: "churn",
    title: "Lease acquisitions",
    unit: "leases",
    kind: "count",
    definition: "Leases granted (lease events `acquired`), one per fencing term, bucketed by the database time of the grant.",
    keys: ["acquired"],
    label: null,
    statement: sql.leaseChurn,
    list: stepsWith({ leaseEvent: "acquired" }),
  },
  {
    id: "lease_renewals",
    family: "churn",
    title: "Lease renewals",
    unit: "renewals",
    kind: "count",
    definition: "Renewals the database accepted (lease events `renewed`). A healthy holder renews every renewEveryMs of its step class.",
    keys: ["renewed"],
    label: null,
    statement: sql.leaseChurn,
    list: stepsWith({ leaseEvent: "renewed" }),
  },
  {
    id: "lease_renewal_refusals",
    family: "churn",
    title: "Renewal refusals",
    unit: "refusals",
    kind: "count",
    definition:
      "Renewals the database refused (lease events `renewal_refused`: term superseded, lease ended, policy changed…). A refusal is an answer; a renewal whose answer never arrived is not counted here.",
    keys: ["renewal_refused"],
    label: null,
    statement: sql.leaseChurn,
    list: stepsWith({ leaseEvent: "renewal_refused" }),
  },
  {
    id: "lease_expiries",
    family: "churn",
    title: "Lease expiries observed",
    unit: "expiries",
    kind: "count",
    definition:
      "Leases the recovery scan found past expiresAt on the database clock (lease events `expiry_observed`). An expiry does not mean the worker stopped; each one opens a recovery decision.",
    keys: ["expiry_observed"],
    label: null,
    statement: sql.leaseChurn,
    list: stepsWith({ leaseEvent: "expiry_observed" }),
  },
  {
    id: "lease_expiry_age",
    family: "churn",
    title: "Age of expired leases",
    unit: "seconds",
    kind: "seconds",
    definition:
      "For each observed expiry: age = observation time − leasedAt (how long the term lived); detection lag = observation time − expiresAt (how long until the scan saw it). Median and maximum per bucket.",
    keys: ["age_p50", "age_max", "detection_lag_p50"],
    label: "stat",
    statement: sql.leaseChurn,
    list: stepsWith({ leaseEvent: "expiry_observed" }),
  },
  {
    id: "recoveries",
    family: "churn",
    title: "Recoveries by category",
    unit: "decisions",
    kind: "count",
    definition:
      "Recovery decisions recorded after a lease ended without a receipt (expiry, failure report or revoke), by the action the evidence allowed.",
    keys: RECOVERY_CATEGORIES,
    label: "category",
    statement: sql.recoveriesByCategory,
    list: null,
    keyList: (key, range) => stepsWith({ recovery: key })(range),
  },
  {
    id: "lease_releases",
    family: "churn",
    title: "Graceful releases",
    unit: "releases",
    kind: "count",
    definition:
      "Leases their holder gave back (lease events `released`), by how the term ended: after its receipt, handed back before invoking (shutdown, waiting for capacity, rate limit), or after the holder reported a failed attempt.",
    keys: ["after_receipt", "handed_back", "after_failure"],
    label: "end",
    statement: sql.leaseChurn,
    list: stepsWith({ leaseEvent: "released" }),
  },
  {
    id: "lease_revocations",
    family: "churn",
    title: "Revocations",
    unit: "revocations",
    kind: "count",
    definition: "Leases an engineer revoked (lease events `revoked`): an explicit admin act, never an expiry, and never a cancellation at the destination.",
    keys: ["revoked"],
    label: null,
    statement: sql.leaseChurn,
    list: stepsWith({ leaseEvent: "revoked" }),
  },
  {
    id: "steps_entering_unknown",
    family: "uncertainty",
    title: "Steps entering unknown",
    unit: "steps",
    kind: "count",
    definition:
      "Recovery decisions whose evidence shows the invocation began but no response, effect observation or receipt was recorded: the destination may or may not have acted. By what ended the lease.",
    keys: ["lease_expired", "attempt_failed", "lease_revoked"],
    label: "trigger",
    statement: sql.enteringUnknown,
    list: stepsWith({ enteredUnknown: "true" }),
  },
  {
    id: "time_to_settle",
    family: "uncertainty",
    title: "Invocation to receipt or manual resolution",
    unit: "seconds",
    kind: "seconds",
    definition:
      "From the step's first invocation to its receipt (verified automatically) or to the resolution of its review case by a person; p50 and p95 of the steps settled in each bucket. Steps never invoked are not counted.",
    keys: ["receipt_p50", "receipt_p95", "manual_p50", "manual_p95"],
    label: "stat",
    statement: sql.timeToSettle,
    list: () => "/steps?state=completed",
  },
  {
    id: "late_observations",
    family: "uncertainty",
    title: "Late observations",
    unit: "observations",
    kind: "count",
    definition: "Evidence posted by a worker whose lease was already stale. It never changes current state; recovery consumes it.",
    keys: ["late"],
    label: null,
    statement: sql.lateObservations,
    list: stepsWith({ hasLateObservation: "true" }),
  },
  {
    id: "fencing_rejections",
    family: "uncertainty",
    title: "Fencing rejections",
    unit: "rejections",
    kind: "count",
    definition: "Writes refused because the presented term had lost authority (stale write rejected), by reason. Each was returned to its worker as \"you lost authority\".",
    keys: REJECTION_REASONS,
    label: "reason",
    statement: sql.fencingRejections,
    list: stepsWith({ hasRejection: "true" }),
  },
  {
    id: "duplicate_external_references",
    family: "uncertainty",
    title: "Duplicate external references",
    unit: "references",
    kind: "count",
    definition:
      "A second or later distinct external reference seen for one step (attempt responses, late observations, receipt), counted when first seen: the destination may hold more than one effect for that step.",
    keys: ["duplicate"],
    label: null,
    statement: sql.duplicateReferences,
    list: () => "/steps?duplicateReference=true",
  },
  {
    id: "recovery_decisions_by_capability",
    family: "uncertainty",
    title: "Recovery decisions by adapter capability",
    unit: "decisions",
    kind: "count",
    definition:
      "Recovery decisions by the repetition policy of the adapter's contract recorded in their evidence: safe, idempotency-protected, reconcilable (status query), or prohibited (an unknown outcome goes to a person).",
    keys: ["safe", "idempotency_protected", "reconcilable", "prohibited"],
    label: "repetition",
    statement: sql.decisionsByCapability,
    list: null,
    keyList: (key, range) => stepsWith({ capability: key })(range),
  },
  {
    id: "open_review_cases",
    family: "uncertainty",
    title: "Open review cases",
    unit: "cases",
    kind: "gauge",
    definition: "Review cases open at the end of each bucket: steps whose outcome only a person can settle.",
    keys: ["open"],
    label: null,
    statement: sql.openReviewCases,
    list: () => "/steps?openReview=true",
  },
  {
    id: "waiting_steps",
    family: "waits",
    title: "Steps waiting",
    unit: "steps",
    kind: "gauge",
    definition:
      "Steps waiting at the end of each bucket, by the room that holds them: a timer (a time), an event wait (an event with a correlation key), or children (the child requests the step started). A waiting step holds no lease and no permit.",
    keys: waitRooms.map((room) => room.name),
    label: "kind",
    statement: waitsSql.waitingSteps,
    list: null,
    keyList: (key) => {
      const room = waitRooms.find((candidate) => candidate.name === key);
      return room ? `/steps?waitingFor=${room.record.waitingFor}` : null;
    },
  },
  {
    id: "events",
    family: "waits",
    title: "Events by outcome",
    unit: "events",
    kind: "count",
    definition:
      "Events from outside: received (accepted and durable, by its database time), consumed (taken by a waiting step), and expired (kept for a wait that never began, until its retention ended).",
    keys: ["received", "consumed", "expired"],
    label: "outcome",
    statement: waitsSql.eventOutcomes,
    list: null,
  },
  {
    id: "timer_lateness",
    family: "waits",
    title: "Timer lateness",
    unit: "seconds",
    kind: "seconds",
    definition:
      "For each timer fired: fired minus due, both on the database clock (a timer never fires early). Median, 95th percentile and maximum per bucket, by when it fired.",
    keys: ["p50", "p95", "max"],
    label: "stat",
    statement: waitsSql.timerLateness,
    list: null,
  },
];
