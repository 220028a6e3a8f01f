"use client";

import type { Route } from "next";
import Link from "next/link";
import { usePathname } from "next/navigation";

const sections = [
  { href: "/requests", label: "Requests" },
  { href: "/steps", label: "Steps" },
  { href: "/review", label: "Review queue" },
  { href: "/metrics", label: "Metrics" },
  { href: "/workers", label: "Workers" },
] as const;

export function StaffNav() {
  const pathname = usePathname();
  return (
    <nav aria-label="Staff">
      <ul>
        {sections.map((section) => (
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
