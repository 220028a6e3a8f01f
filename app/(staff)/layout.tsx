import type { ReactNode } from "react";
import { StaffHeader } from "@/components/ui/staff-header";
import { currentStaff } from "@/lib/auth/page";

/**
 * Staff pages (support, engineers, admins) share this header; end-user pages (/track) do not.
 * Each page authorises itself (lib/auth/page.ts); the header only shows who is signed in and
 * the sections their roles open.
 */
export default async function StaffLayout({ children }: { children: ReactNode }) {
  return (
    <>
      <StaffHeader staff={await currentStaff()} />
      <main id="main">{children}</main>
    </>
  );
}
