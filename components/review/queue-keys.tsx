"use client";

/**
 * Keyboard use of the queue: j and k move to the next and previous case (focusing the row's
 * link, so Enter opens it as a click would), / jumps to the search box. Keys typed into a field,
 * or with a modifier, are left alone.
 */
import { useEffect, useRef, type ReactNode } from "react";

const TYPING = new Set(["INPUT", "TEXTAREA", "SELECT"]);

export function QueueKeys({ children, searchId }: { children: ReactNode; searchId: string }) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      const target = event.target as HTMLElement | null;
      if (target && (TYPING.has(target.tagName) || target.isContentEditable)) return;
      if (event.key === "/") {
        event.preventDefault();
        document.getElementById(searchId)?.focus();
        return;
      }
      if (event.key !== "j" && event.key !== "k") return;
      const links = [...(container.current?.querySelectorAll<HTMLAnchorElement>("tbody tr a[data-case-link]") ?? [])];
      if (links.length === 0) return;
      event.preventDefault();
      const current = links.findIndex((link) => link === document.activeElement);
      const next = current === -1 ? (event.key === "j" ? 0 : links.length - 1) : Math.min(links.length - 1, Math.max(0, current + (event.key === "j" ? 1 : -1)));
      links[next]!.focus();
      links[next]!.closest("tr")?.scrollIntoView({ block: "nearest" });
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [searchId]);
  return <div ref={container}>{children}</div>;
}
