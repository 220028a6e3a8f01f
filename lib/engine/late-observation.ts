/**
 * Late observations: evidence from a worker that lost its lease and then learned something (a
 * delayed response, a timeout). Append-only; recovery consumes them, converging when they agree
 * with what else is known and raising an integrity conflict when they do not. They keep the
 * external reference and a digest of the result, not the result itself.
 */
import { run, type Queryable } from "./db";
import { NotFoundError } from "./errors";
import { evidenceOf } from "./rejection";
import * as sql from "./sql/late-observation";
import type { LateObservation, LeaseHandle } from "./types";

export async function postLateObservation(db: Queryable, lease: LeaseHandle, observation: LateObservation): Promise<string> {
  const [row] = await run<{ id: string }>(db, sql.postLateObservation, [
    lease.sessionId,
    lease.stepId,
    lease.fencingTerm.toString(),
    observation.operation,
    observation.externalReference,
    evidenceOf(observation.result),
  ]);
  if (!row) throw new NotFoundError("lease held by this session", `${lease.stepId}/${lease.fencingTerm}`);
  return row.id;
}
