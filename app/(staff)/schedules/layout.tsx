import type { ReactNode } from "react";
import { authorizePage } from "@/lib/auth/page";

/** Authorises before this section's loading boundary streams (see fair-share/layout.tsx); the page checks again. */
export default async function Layout({ children }: { children: ReactNode }) {
  await authorizePage("schedules:read", "/schedules");
  return children;
}
