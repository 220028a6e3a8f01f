"use client";

import { useState, type FormEvent } from "react";

export function SignInForm({ next }: { next: string }) {
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setPending(true);
    setError(null);
    const response = await fetch("/api/session", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: form.get("email"), password: form.get("password") }),
    }).catch(() => null);
    if (response?.ok) {
      window.location.assign(next);
      return;
    }
    setPending(false);
    const problem = (await response?.json().catch(() => null)) as { detail?: string } | null;
    setError(problem?.detail ?? "the sign-in service did not answer; try again");
  }

  return (
    <form className="card stack" onSubmit={submit} aria-describedby={error ? "sign-in-error" : undefined}>
      <label className="stack">
        <span>Email</span>
        <input name="email" type="email" autoComplete="username" required />
      </label>
      <label className="stack">
        <span>Password</span>
        <input name="password" type="password" autoComplete="current-password" required />
      </label>
      {error && (
        <p id="sign-in-error" role="alert" className="error">
          Sign-in refused: {error}
        </p>
      )}
      <button type="submit" disabled={pending}>
        {pending ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
