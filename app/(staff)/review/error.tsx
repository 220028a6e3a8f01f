"use client";

/** A queue or case that failed to load says so, never an empty table. */
import { ErrorState } from "@/components/ui/states";

export default function ReviewError({ error, retry }: { error: Error & { digest?: string }; retry: () => void }) {
  return (
    <div className="stack">
      <h1>Review queue</h1>
      <ErrorState what="the review queue" error={new Error(error.digest ? `a server error (reference ${error.digest})` : error.message)} />
      <button type="button" onClick={retry}>
        Try again
      </button>
    </div>
  );
}
