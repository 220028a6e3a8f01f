/**
 * Authorisation of apps: the app API key in `Authorization: Bearer`, and the scope the call
 * needs. A missing, unknown or revoked key is 401; a key without the scope is 403. Only app keys
 * are looked up here: a worker token or a staff session is not an app.
 */
import { pool } from "@/lib/db/pool";
import type { AppKeyScope } from "./app-key-scopes";
import { identifyApp, type AppIdentity } from "./app-keys";
import { AppKeyRequiredError, PermissionDeniedError } from "./errors";

const BEARER = /^Bearer\s+(\S{1,512})\s*$/i;

/** Whether the request presents any bearer credential (then it must be a valid app key). */
export const presentsBearer = (request: Request): boolean => request.headers.has("authorization");

export async function authorizeApp(request: Request, scope: AppKeyScope): Promise<AppIdentity> {
  const match = BEARER.exec(request.headers.get("authorization") ?? "");
  const app = match ? await identifyApp(pool(), match[1]!) : null;
  if (!app) throw new AppKeyRequiredError();
  if (!app.scopes.includes(scope)) throw new PermissionDeniedError(`this app key lacks the ${scope} scope (it has ${app.scopes.join(", ")})`);
  return app;
}
