import type { ReactNode } from "react";
import { SignedInAs } from "@/components/auth/sign-out";
import { EpochBanner } from "@/components/ui/epoch-banner";
import { StaffNav } from "@/components/ui/staff-nav";
import { ThemeToggle } from "@/components/ui/theme-toggle";
import { currentStaff } from "@/lib/auth/page";
import { may } from "@/lib/auth/roles";

/**
 * Staff pages (support, engineers, admins) share this header; end-user pages (/track) do not.
 * Each page authorises itself (lib/auth/page.ts); the header only shows who is signed in and
 * the sections their roles open.
 */
export default async function StaffLayout({ children }: { children: ReactNode }) {
  const staff = await currentStaff();
  const roles = staff?.roles ?? [];
  const sections = {
    technical: may(roles, "technical:read"),
    review: may(roles, "review:read"),
    audit: may(roles, "audit:read"),
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
      <main id="main">{children}</main>
    </>
  );
}
