import type { ReactNode } from "react";
import { authorizePage } from "@/lib/auth/page";

/**
 * Authorises before this section's loading boundary streams, so a refusal is a real 403 (or the
 * redirect to /login) rather than a 200 whose body turns into the refusal. The page checks again.
 */
export default async function Layout({ children }: { children: ReactNode }) {
  await authorizePage("technical:read", "/fair-share");
  return children;
}
