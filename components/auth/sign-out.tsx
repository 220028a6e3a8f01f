"use client";

/** Who is signed in, and the way out. */
export function SignedInAs({ email, roles }: { email: string; roles: readonly string[] }) {
  async function signOut() {
    await fetch("/api/session", { method: "DELETE" }).catch(() => null);
    window.location.assign("/login");
  }
  return (
    <span className="row signed-in">
      <span data-testid="signed-in-as">
        {email} <span className="muted">({roles.join(", ") || "no role"})</span>
      </span>
      <button type="button" onClick={signOut}>
        Sign out
      </button>
    </span>
  );
}
