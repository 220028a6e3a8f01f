import type { ReactNode } from "react";

/** Loading, empty and error states: each says why, never a blank area. */
export function Loading({ what }: { what: string }) {
  return (
    <p className="state" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="state">{children}</p>;
}

export function ErrorState({ what, error }: { what: string; error: unknown }) {
  const detail = error instanceof Error ? error.message : String(error);
  return (
    <p className="state error" role="alert">
      Could not load {what}: {detail}
    </p>
  );
}
