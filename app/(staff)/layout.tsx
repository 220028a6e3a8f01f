import type { ReactNode } from "react";
import { EpochBanner } from "@/components/ui/epoch-banner";
import { StaffNav } from "@/components/ui/staff-nav";
import { ThemeToggle } from "@/components/ui/theme-toggle";

/** Staff pages (support and engineers) share this header; end-user pages (/track) do not. */
export default function StaffLayout({ children }: { children: ReactNode }) {
  return (
    <>
      <header className="staff-header">
        <a className="brand" href="/">
          Fenceline
        </a>
        <StaffNav />
        <span className="spacer" />
        <ThemeToggle />
      </header>
      <EpochBanner />
      <main id="main">{children}</main>
    </>
  );
}
