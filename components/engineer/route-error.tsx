"use client";

/** An engineer page failed on the server: say so, show only the digest (never internals), offer a retry that refetches. */
export function RouteError({ what, error, retry }: { what: string; error: Error & { digest?: string }; retry: () => void }) {
  return (
    <div className="stack">
      <p className="state error" role="alert">
        Could not load {what}. The server logged the failure{error.digest ? ` (reference ${error.digest})` : ""}; the database may be
        unreachable.
      </p>
      <button type="button" onClick={() => retry()}>
        Try again
      </button>
    </div>
  );
}
