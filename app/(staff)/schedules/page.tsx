import type { Metadata } from "next";
import { SchedulesView } from "@/components/engineer/schedules-view";
import { authorizePage } from "@/lib/auth/page";
import { may } from "@/lib/auth/roles";
import { readPool } from "@/lib/db/read-pool";
import { listSchedules } from "@/lib/schedules/manage";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Schedules", robots: { index: false, follow: false } };

export default async function SchedulesPage() {
  const staff = await authorizePage("schedules:read", "/schedules");
  return (
    <div className="stack">
      <h1>Schedules</h1>
      <SchedulesView initial={await listSchedules(readPool(), null)} canManage={may(staff.roles, "schedules:manage")} />
    </div>
  );
}
