/**
 * Staff sign-in through better-auth: email and password (scrypt-hashed), sessions stored in
 * PostgreSQL with an expiry, the session token in an httpOnly, SameSite=Lax cookie that is Secure
 * whenever the app is served over HTTPS. Sign-up is closed: accounts are created by an admin
 * (lib/auth/accounts.ts) or seeded in demo mode. Roles live beside the user in `staff_role`.
 *
 * Tables are snake_case like the rest of the schema (migration `*_auth`), mapped here.
 */
import { betterAuth } from "better-auth";
import { pool } from "@/lib/db/pool";

/** Eight hours from sign-in, a working day; sessions are never extended (lib/auth/staff.ts reads them with refresh off). */
export const SESSION_TTL_SECONDS = 8 * 60 * 60;

const timestamps = { createdAt: "created_at", updatedAt: "updated_at" } as const;

function authSecret(): string {
  const secret = process.env.FENCELINE_AUTH_SECRET;
  if (secret) return secret;
  // npm start always passes one; only tests and `next dev` fall back to a fixed, non-secret value.
  if (process.env.NODE_ENV === "production") throw new Error("FENCELINE_AUTH_SECRET is not set (npm start sets it)");
  return "fenceline-development-secret-not-for-production-use";
}

function createAuth() {
  return betterAuth({
    secret: authSecret(),
    database: pool(),
    emailAndPassword: { enabled: true, disableSignUp: true, minPasswordLength: 12, maxPasswordLength: 128 },
    session: { expiresIn: SESSION_TTL_SECONDS, fields: { expiresAt: "expires_at", ipAddress: "ip_address", userAgent: "user_agent", userId: "user_id", ...timestamps }, modelName: "auth_session" },
    user: { modelName: "auth_user", fields: { emailVerified: "email_verified", ...timestamps } },
    account: {
      modelName: "auth_account",
      fields: {
        accountId: "account_id",
        providerId: "provider_id",
        userId: "user_id",
        accessToken: "access_token",
        refreshToken: "refresh_token",
        idToken: "id_token",
        accessTokenExpiresAt: "access_token_expires_at",
        refreshTokenExpiresAt: "refresh_token_expires_at",
        ...timestamps,
      },
    },
    verification: { modelName: "auth_verification", fields: { expiresAt: "expires_at", ...timestamps } },
    // Fenceline's own limiter guards sign-in (lib/auth/rate-limit.ts) and problem+json replies.
    rateLimit: { enabled: false },
    // Secure cookies follow the public URL: HTTPS in production, plain HTTP on a loopback demo.
    baseURL: process.env.FENCELINE_PUBLIC_URL,
    advanced: { cookiePrefix: "fenceline", defaultCookieAttributes: { httpOnly: true, sameSite: "lax" } },
    telemetry: { enabled: false },
  });
}

export type Auth = ReturnType<typeof createAuth>;

// On globalThis, like the pools: one instance per process, created on first use (never at build).
const handles = globalThis as typeof globalThis & { fencelineAuth?: { pool: unknown; auth: Auth } };

export function auth(): Auth {
  const current = pool();
  // Tests point DATABASE_URL at a new database per file, which replaces the pool.
  if (handles.fencelineAuth?.pool !== current) handles.fencelineAuth = { pool: current, auth: createAuth() };
  return handles.fencelineAuth.auth;
}
