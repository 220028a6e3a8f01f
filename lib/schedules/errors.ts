/** The schedule room's refusals, each mapped to its problem in lib/api/http.ts. */
import { FencelineError, type InputIssue } from "@/lib/engine/errors";

/** A schedule that cannot be created as given: each issue names its field (`cron`, `timeZone`, `kind`, `input.…`). */
export class InvalidScheduleError extends FencelineError {
  readonly code = "invalid_schedule";
  constructor(readonly issues: readonly InputIssue[]) {
    super(`invalid schedule: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ")}`);
  }
}

/** A schedule of this name exists with another definition: one name names one schedule. */
export class ScheduleExistsError extends FencelineError {
  readonly code = "schedule_exists";
  constructor(readonly name: string) {
    super(`a schedule named "${name}" already exists with another definition: delete it first, or choose another name`);
  }
}
