import type { Metadata } from "next";

export const metadata: Metadata = { title: "Page not found", robots: { index: false, follow: false } };

/**
 * The app's one not-found page: an unknown path, a link that cannot be read (proxy.ts), an
 * unknown tracking token. An end user may land here, so it speaks their words.
 */
export default function NotFound() {
  return (
    <main id="main" className="stack">
      <h1>Page not found</h1>
      <p>There is nothing at this address. If you followed a link, check that it was copied in full.</p>
    </main>
  );
}
