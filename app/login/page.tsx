/** /login — staff sign in; afterwards they go back to the page that sent them here. */
import type { Metadata, Route } from "next";
import { redirect } from "next/navigation";
import { SignInForm } from "@/components/auth/sign-in-form";
import { currentStaff } from "@/lib/auth/page";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in" };

/** Only a path on this site: `next` must not send anyone elsewhere (an open redirect). */
const safeNext = (value: unknown): string => (typeof value === "string" && /^\/(?![/\\])/.test(value) ? value : "/review");

export default async function LoginPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const next = safeNext((await searchParams).next);
  if (await currentStaff()) redirect(next as Route);
  return (
    <main id="main" className="stack login">
      <h1>Fenceline staff sign-in</h1>
      <p className="muted">Support, engineers and admins. Customers follow their tracking link and need no account.</p>
      <SignInForm next={next} />
    </main>
  );
}
