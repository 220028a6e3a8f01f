import { SignedInAs } from "@/components/auth/sign-out";
import { EpochBanner } from "@/components/ui/epoch-banner";
import { StaffNav } from "@/components/ui/staff-nav";
import { ThemeToggle } from "@/components/ui/theme-toggle";
import { may } from "@/lib/auth/roles";
import type { Staff } from "@/lib/auth/staff";

/** The staff header: who is signed in, the sections their roles open, and the epoch banner. */
export function StaffHeader({ staff }: { staff: Staff | null }) {
  const roles = staff?.roles ?? [];
  const sections = {
    technical: may(roles, "technical:read"),
    review: may(roles, "review:read"),
    audit: may(roles, "audit:read"),
    schedules: may(roles, "schedules:read"),
    admin: may(roles, "accounts:manage"),
  };
  return (
    <>
      <header className="staff-header">
        <a className="brand" href="/">
          Fenceline
        </a>
        <StaffNav sections={sections} />
        <span className="spacer" />
        {staff && <SignedInAs email={staff.email} roles={staff.roles} />}
        <ThemeToggle />
      </header>
      {staff && <EpochBanner />}
    </>
  );
}
