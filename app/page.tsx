/**
 * / — signed out, what Fenceline is and where each audience goes; signed in, the staff overview
 * ("now"): the figures the person's roles open, each linking to the list behind it.
 */
import { Guarantees } from "@/components/guarantees";
import { OverviewView } from "@/components/overview/overview";
import { StaffHeader } from "@/components/ui/staff-header";
import { ThemeToggle } from "@/components/ui/theme-toggle";
import { currentStaff } from "@/lib/auth/page";
import { may } from "@/lib/auth/roles";
import { readPool } from "@/lib/db/read-pool";
import { readOverview } from "@/lib/overview/read";

export const dynamic = "force-dynamic";

export default async function HomePage() {
  const staff = await currentStaff();
  if (!staff) return <Description />;
  const sections = { technical: may(staff.roles, "technical:read"), review: may(staff.roles, "review:read") };
  return (
    <>
      <StaffHeader staff={staff} />
      <main id="main">
        <OverviewView overview={await readOverview(readPool())} sections={sections} />
      </main>
    </>
  );
}

function Description() {
  return (
    <main id="main" className="stack">
      <div className="row">
        <h1 style={{ flex: 1 }}>Fenceline</h1>
        <ThemeToggle />
      </div>
      <p>
        Multi-step requests whose steps call external services, run on fallible workers, each completed step proven by a
        durable receipt. A lease says who may work now; only evidence says what happened.
      </p>
      <nav aria-label="Views">
        <ul>
          <li>
            <a href="/requests">Requests and steps</a> — engineers: lease history, attempts, receipts
          </li>
          <li>
            <a href="/review">Review queue</a> — support: outcomes only a person can settle
          </li>
          <li>
            <a href="/metrics">Metrics</a> — lease churn apart from outcome uncertainty
          </li>
          <li>
            <a href="/workers">Workers</a> — sessions, heartbeats, and the fault lab
          </li>
          <li>
            <a href="/login">Staff sign-in</a> — support, engineers and admins
          </li>
          <li>
            <a href="/api/openapi.json">API (OpenAPI)</a>
          </li>
        </ul>
      </nav>
      <Guarantees />
    </main>
  );
}
