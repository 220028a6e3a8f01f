/**
 * The HTTP client's checks of its hottest answers: claimed steps and receipt results, up to 50
 * of each per exchange. Parsing them through their zod schemas (lib/api/contract/worker.ts) cost
 * the worker more CPU than anything else it did per step, so they are checked here field by field
 * for what the worker reads — types, decimal terms, valid times, known modes and reasons — and
 * converted in the same pass. Bad server output still never passes silently: it is a
 * WireCheckError naming the field. The zod schemas stay the protocol's definition; the protocol
 * tests check real answers against them (lib/worker/coordinator.http.db.test.ts).
 */
import type { z } from "zod";
import type { wireAuthorityLost } from "@/lib/api/contract/worker";
import { AuthorityLostError } from "@/lib/engine/errors";
import type { ClaimedStep, ReceiptResult } from "@/lib/engine/types";
import { ATTEMPT_MODES, REJECTION_REASONS, type AttemptMode, type RejectionReason } from "@/lib/engine/vocabulary";

/** An answer that does not have the shape the protocol promises. */
export class WireCheckError extends Error {}

const TERM = /^\d{1,19}$/;
const MODES: ReadonlySet<string> = new Set(ATTEMPT_MODES);
const REASONS: ReadonlySet<string> = new Set(REJECTION_REASONS);

type Fields = Record<string, unknown>;

function record(value: unknown, where: string): Fields {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new WireCheckError(`${where}: expected an object`);
  return value as Fields;
}

function list(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw new WireCheckError(`${where}: expected an array`);
  return value;
}

function text(fields: Fields, key: string, where: string): string {
  const value = fields[key];
  if (typeof value !== "string") throw new WireCheckError(`${where}.${key}: expected a string`);
  return value;
}

function integer(fields: Fields, key: string, where: string): number {
  const value = fields[key];
  if (!Number.isInteger(value)) throw new WireCheckError(`${where}.${key}: expected an integer`);
  return value as number;
}

function term(fields: Fields, key: string, where: string): bigint {
  const value = fields[key];
  if (typeof value !== "string" || !TERM.test(value)) throw new WireCheckError(`${where}.${key}: expected a decimal integer`);
  return BigInt(value);
}

function time(fields: Fields, key: string, where: string): Date {
  const value = fields[key];
  const date = typeof value === "string" ? new Date(value) : null;
  if (date === null || Number.isNaN(date.getTime())) throw new WireCheckError(`${where}.${key}: expected an ISO 8601 time`);
  return date;
}

/** Converts a claimed step from the wire, checking every field the worker reads. */
function claimedStep(value: unknown, where: string): ClaimedStep {
  const f = record(value, where);
  const mode = text(f, "mode", where);
  if (!MODES.has(mode)) throw new WireCheckError(`${where}.mode: unknown mode ${JSON.stringify(mode)}`);
  const requestIdentity = f.requestIdentity;
  // Absent from a server older than traces: the attempt then starts a trace of its own.
  const traceParent = f.traceParent ?? null;
  if (traceParent !== null && typeof traceParent !== "string") throw new WireCheckError(`${where}.traceParent: expected a string or null`);
  if (requestIdentity !== null && typeof requestIdentity !== "string") throw new WireCheckError(`${where}.requestIdentity: expected a string or null`);
  return {
    stepId: text(f, "stepId", where),
    workflowId: text(f, "workflowId", where),
    kind: text(f, "kind", where),
    workflowVersion: integer(f, "workflowVersion", where),
    stepName: text(f, "stepName", where),
    attemptId: text(f, "attemptId", where),
    fencingTerm: term(f, "fencingTerm", where),
    epoch: term(f, "epoch", where),
    mode: mode as AttemptMode,
    requestIdentity,
    input: f.input,
    dependencyResults: record(f.dependencyResults, `${where}.dependencyResults`),
    dependencyReferences: referencesOf(f.dependencyReferences, `${where}.dependencyReferences`),
    inputDigest: text(f, "inputDigest", where),
    adapter: text(f, "adapter", where),
    adapterVersion: text(f, "adapterVersion", where),
    operation: text(f, "operation", where),
    stepClass: text(f, "stepClass", where),
    attemptsStarted: integer(f, "attemptsStarted", where),
    attemptBudget: integer(f, "attemptBudget", where),
    leaseTtlMs: integer(f, "leaseTtlMs", where),
    renewEveryMs: integer(f, "renewEveryMs", where),
    attemptDeadlineMs: integer(f, "attemptDeadlineMs", where),
    graceMs: integer(f, "graceMs", where),
    deadlineAt: time(f, "deadlineAt", where),
    expiresAt: time(f, "expiresAt", where),
    checkpointVersion: integer(f, "checkpointVersion", where),
    dbNow: time(f, "dbNow", where),
    waits: waitsOf(f.waits, `${where}.waits`),
    traceParent,
  };
}

/** Dependencies' external references from the wire: absent from a server older than them, which gave none. */
function referencesOf(value: unknown, where: string): ClaimedStep["dependencyReferences"] {
  if (value === undefined) return {};
  const f = record(value, where);
  for (const [name, reference] of Object.entries(f)) {
    if (reference !== null && typeof reference !== "string") throw new WireCheckError(`${where}.${name}: expected a string or null`);
  }
  return f as ClaimedStep["dependencyReferences"];
}

/** A claimed step's waits from the wire: a count and two times (null before any wait). */
function waitsOf(value: unknown, where: string): ClaimedStep["waits"] {
  const f = record(value, where);
  const at = (key: string) => (f[key] === null ? null : time(f, key, where));
  return { count: integer(f, "count", where), firstAt: at("firstAt"), lastAt: at("lastAt") };
}

/** The claimed steps of a claim's answer (`{ steps: [...] }`), checked and converted. */
export function claimedStepsOf(answer: unknown): ClaimedStep[] {
  return list(record(answer, "answer").steps, "steps").map((step, i) => claimedStep(step, `steps.${i}`));
}

/** An AuthorityLostError from its wire fields (a 409 problem, or a refused receipt). */
export const authorityLost = (fields: z.output<typeof wireAuthorityLost>): AuthorityLostError =>
  new AuthorityLostError(fields.operation, fields.stepId, BigInt(fields.presentedTerm), fields.reason, fields.currentTerm === null ? null : BigInt(fields.currentTerm));

function refusedReceipt(value: unknown, where: string): AuthorityLostError {
  const f = record(value, where);
  if (f.code !== "authority-lost") throw new WireCheckError(`${where}.code: expected "authority-lost"`);
  const reason = text(f, "reason", where);
  if (!REASONS.has(reason)) throw new WireCheckError(`${where}.reason: unknown reason ${JSON.stringify(reason)}`);
  const currentTerm = f.currentTerm === null ? null : term(f, "currentTerm", where);
  return new AuthorityLostError(text(f, "operation", where), text(f, "stepId", where), term(f, "presentedTerm", where), reason as RejectionReason, currentTerm);
}

/** The receipt results of a commit's answer (`{ results: [...] }`), checked and converted. */
export function receiptResultsOf(answer: unknown): ReceiptResult[] {
  return list(record(answer, "answer").results, "results").map((value, i): ReceiptResult => {
    const where = `results.${i}`;
    const f = record(value, where);
    const stepId = text(f, "stepId", where);
    if (f.committed === true) return { stepId, committed: true, receiptId: text(f, "receiptId", where) };
    if (f.committed === false) return { stepId, committed: false, error: refusedReceipt(f.error, `${where}.error`) };
    throw new WireCheckError(`${where}.committed: expected a boolean`);
  });
}
