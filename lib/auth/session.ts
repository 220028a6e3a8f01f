/**
 * Signing in and out. better-auth checks the password and writes the session; this module adds
 * Fenceline's edge around it: the CSRF check, rate limits per client and per account, and
 * refusals as problem+json. It returns the Set-Cookie headers for the route to pass on.
 */
import { APIError } from "better-auth/api";
import { pool, prisma } from "@/lib/db/pool";
import { auth } from "./auth";
import { InvalidCredentialsError } from "./errors";
import { refuseCrossSite } from "./origin";
import { clientKey, RateLimiter } from "./rate-limit";
import { staffFromHeaders, type Staff } from "./staff";

/** Per client address, every attempt: a burst of 20, then one every 3 s. */
export const signInByClient = new RateLimiter("sign-in-by-client", "sign-in", { capacity: 20, refillPerSecond: 1 / 3 });
/**
 * Per account, failed attempts only, from anywhere: 5, then one every 30 s, so guessing one
 * password stays slow however many addresses try, while its owner signing in costs nothing.
 */
export const signInByAccount = new RateLimiter("sign-in-by-account", "sign-in", { capacity: 5, refillPerSecond: 1 / 30 });

export async function signIn(request: Request, credentials: { email: string; password: string }): Promise<{ staff: Staff; setCookie: string[] }> {
  refuseCrossSite(request);
  await signInByClient.take(pool(), clientKey(request));
  const account = credentials.email.toLowerCase();
  await signInByAccount.check(pool(), account);
  let setCookie: string[];
  try {
    const result = await auth().api.signInEmail({ body: { email: credentials.email, password: credentials.password }, headers: request.headers, returnHeaders: true });
    setCookie = result.headers.getSetCookie();
  } catch (error) {
    // better-auth answers a wrong email and a wrong password alike; so do we.
    if (error instanceof APIError && error.statusCode === 401) {
      await signInByAccount.take(pool(), account);
      throw new InvalidCredentialsError();
    }
    throw error;
  }
  const cookie = setCookie.map((header) => header.split(";")[0]).join("; ");
  const staff = await staffFromHeaders(prisma(), new Headers({ cookie }));
  if (!staff) throw new Error("signIn: the session better-auth just created does not resolve");
  return { staff, setCookie };
}

export async function signOut(request: Request): Promise<string[]> {
  refuseCrossSite(request);
  if (!(await staffFromHeaders(prisma(), request.headers))) return [];
  const result = await auth().api.signOut({ headers: request.headers, returnHeaders: true });
  return result.headers.getSetCookie();
}
