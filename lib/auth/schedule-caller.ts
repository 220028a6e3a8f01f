/**
 * Who manages schedules: an app, with an app key holding `schedules:manage` (its own schedules
 * only, whose requests are the app's), or staff (every schedule: engineers read, admins change).
 */
import { authorizeApp, presentsBearer } from "./app";
import { requesterOf } from "./app-keys";
import { authorize } from "./authorize";
import { actorName } from "./staff";

export type ScheduleCaller = {
  /** The owner whose schedules the caller sees and changes; null for staff (all). */
  readonly owner: string | null;
  /** The owner a schedule the caller creates gets: the app's requester, or `schedule` for staff. */
  readonly createAs: string;
  /** Who the audit log names. */
  readonly actor: string;
};

export async function scheduleCaller(request: Request, need: "read" | "manage"): Promise<ScheduleCaller> {
  if (presentsBearer(request)) {
    const app = await authorizeApp(request, "schedules:manage");
    const owner = requesterOf(app.app);
    return { owner, createAs: owner, actor: owner };
  }
  const staff = await authorize(request, need === "read" ? "schedules:read" : "schedules:manage");
  return { owner: null, createAs: "schedule", actor: actorName(staff) };
}
