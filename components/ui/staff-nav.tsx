"use client";

import type { Route } from "next";
import Link from "next/link";
import { usePathname } from "next/navigation";

type Section = "technical" | "review" | "audit" | "schedules" | "admin";

const sections: readonly { href: string; label: string; needs: Section }[] = [
  { href: "/requests", label: "Requests", needs: "technical" },
  { href: "/steps", label: "Steps", needs: "technical" },
  { href: "/review", label: "Review queue", needs: "review" },
  { href: "/metrics", label: "Metrics", needs: "technical" },
  { href: "/workers", label: "Workers", needs: "technical" },
  { href: "/fair-share", label: "Fair share", needs: "technical" },
  { href: "/schedules", label: "Schedules", needs: "schedules" },
  { href: "/audit", label: "Audit log", needs: "audit" },
  { href: "/admin", label: "Admin", needs: "admin" },
];

/** The sections the signed-in person's roles open (the pages check again for themselves). */
export function StaffNav({ sections: open }: { sections: Record<Section, boolean> }) {
  const pathname = usePathname();
  return (
    <nav aria-label="Staff">
      <ul>
        {sections
          .filter((section) => open[section.needs])
          .map((section) => (
            <li key={section.href}>
              <Link href={section.href as Route} aria-current={pathname.startsWith(section.href) ? "page" : undefined}>
                {section.label}
              </Link>
            </li>
          ))}
      </ul>
    </nav>
  );
}
