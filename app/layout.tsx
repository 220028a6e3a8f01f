import type { Metadata } from "next";
import { headers } from "next/headers";
import type { ReactNode } from "react";
import { NONCE_HEADER } from "@/lib/web/security-headers";
import "./globals.css";
import { Providers } from "./providers";

export const metadata: Metadata = {
  title: { default: "Fenceline", template: "%s · Fenceline" },
  description: "Requests carried out step by step, with every completed step on record.",
};

// Reading the request makes every page render per request, which a nonce needs: a page built
// ahead of time would carry scripts without this request's nonce (proxy.ts).
export default async function RootLayout({ children }: { children: ReactNode }) {
  const nonce = (await headers()).get(NONCE_HEADER) ?? undefined;
  return (
    // next-themes sets data-theme before hydration; the attribute differs from the server's.
    <html lang="en" suppressHydrationWarning>
      <body>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <Providers nonce={nonce}>{children}</Providers>
      </body>
    </html>
  );
}
