/**
 * Staff sessions for route tests: an account with the given roles in the test database, signed
 * in through better-auth, and the Cookie header that carries its session.
 */
import { randomBytes } from "node:crypto";
import type { Pool } from "pg";
import { createAccount } from "./accounts";
import { auth } from "./auth";
import type { StaffRole } from "./roles";

export type SignedIn = { readonly email: string; readonly cookie: string; readonly headers: { readonly cookie: string } };

export async function signedIn(db: Pool, roles: readonly StaffRole[], name = roles.join("+") || "nobody"): Promise<SignedIn> {
  const email = `${name.replaceAll(/[^a-z]+/g, "-")}-${randomBytes(4).toString("hex")}@staff.test`;
  const password = randomBytes(16).toString("base64url");
  await createAccount(db, { email, name, password, roles }, "test setup");
  // Straight through better-auth: the sign-in route's rate limit is tested on its own.
  const result = await auth().api.signInEmail({ body: { email, password }, returnHeaders: true });
  const cookie = result.headers.getSetCookie().map((header) => header.split(";")[0]).join("; ");
  return { email, cookie, headers: { cookie } };
}
