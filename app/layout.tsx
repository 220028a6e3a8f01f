import type { Metadata } from "next";
import type { ReactNode } from "react";
import "./globals.css";
import { Providers } from "./providers";

export const metadata: Metadata = {
  title: { default: "Fenceline", template: "%s · Fenceline" },
  description: "Requests carried out step by step, with every completed step on record.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    // next-themes sets data-theme before hydration; the attribute differs from the server's.
    <html lang="en" suppressHydrationWarning>
      <body>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
