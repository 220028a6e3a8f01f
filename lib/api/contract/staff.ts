/**
 * Staff sign-in and administration: the session (sign in, who am I, sign out), accounts and
 * their roles, worker tokens, app keys, scrape tokens, and the audit log.
 */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { APP_KEY_SCOPES } from "@/lib/auth/app-key-scopes";
import { KIND_PATTERN } from "@/lib/definitions/workflow";
import { STAFF_ROLES } from "@/lib/auth/roles";
import { problemResponse, staffResponses } from "./common";

const timestamp = z.iso.datetime({ offset: true });
const ok = (description: string, schema: z.ZodType) => ({ description, content: { "application/json": { schema } } });
const jsonBody = (schema: z.ZodType) => ({ content: { "application/json": { schema } } });

const email = z.email().max(254);
const role = z.enum(STAFF_ROLES);

export const signInBody = z.strictObject({ email, password: z.string().min(1).max(128) }).meta({ id: "SignInBody" });

export const staffSchema = z
  .object({ id: z.string(), email: z.string(), name: z.string(), roles: z.array(role) })
  .meta({ id: "Staff", description: "The signed-in staff member" });

// ---------------------------------------------------------------------------------------------
// Accounts

export const accountSchema = staffSchema.extend({ createdAt: timestamp }).meta({ id: "Account" });
export const accountListSchema = z.object({ items: z.array(accountSchema) }).meta({ id: "AccountList" });
export const createAccountBody = z
  .strictObject({
    email,
    name: z.string().trim().min(1).max(100),
    password: z.string().min(12, "at least 12 characters").max(128),
    roles: z.array(role).max(STAFF_ROLES.length),
  })
  .meta({ id: "CreateAccountBody" });
export const accountParams = z.object({ id: z.uuid() });
export const setRolesBody = z.strictObject({ roles: z.array(role).max(STAFF_ROLES.length) }).meta({ id: "SetRolesBody" });

// ---------------------------------------------------------------------------------------------
// Worker tokens

const workerName = z.string().trim().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, "lowercase letters, digits, . _ - (1–63)");
export const workerTokenSchema = z
  .object({
    id: z.string(),
    workerName: z.string(),
    createdAt: timestamp,
    createdBy: z.string(),
    revokedAt: timestamp.nullable(),
    revokedBy: z.string().nullable(),
  })
  .meta({ id: "WorkerToken" });
export const workerTokenListSchema = z.object({ items: z.array(workerTokenSchema) }).meta({ id: "WorkerTokenList" });
export const createWorkerTokenBody = z.strictObject({ workerName }).meta({ id: "CreateWorkerTokenBody" });
export const createdWorkerTokenSchema = workerTokenSchema
  .extend({ token: z.string().meta({ description: "Shown once; only its SHA-256 is stored" }) })
  .meta({ id: "CreatedWorkerToken" });
export const workerTokenParams = z.object({ id: z.string().regex(/^[1-9][0-9]{0,17}$/) });

// ---------------------------------------------------------------------------------------------
// App keys

const appName = z.string().trim().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, "lowercase letters, digits, . _ - (1–63)");
const appKeyScope = z.enum(APP_KEY_SCOPES);
export const appKeySchema = z
  .object({
    id: z.string(),
    app: z.string(),
    scopes: z.array(appKeyScope),
    kinds: z.array(z.string()).meta({ description: "The kinds the key may start; empty: every registered kind" }),
    createdAt: timestamp,
    createdBy: z.string(),
    revokedAt: timestamp.nullable(),
    revokedBy: z.string().nullable(),
  })
  .meta({ id: "AppKey" });
export const appKeyListSchema = z.object({ items: z.array(appKeySchema) }).meta({ id: "AppKeyList" });
export const createAppKeyBody = z
  .strictObject({
    app: appName,
    scopes: z.array(appKeyScope).min(1, "at least one scope").max(APP_KEY_SCOPES.length),
    kinds: z
      .array(z.string().regex(KIND_PATTERN, "a workflow kind: lower-case letters, digits, . _ - (1–100)"))
      .max(100)
      .optional()
      .meta({ description: "The kinds the key may start (a create of another is refused as unknown); absent or empty: every registered kind" }),
  })
  .meta({ id: "CreateAppKeyBody" });
export const createdAppKeySchema = appKeySchema
  .extend({ key: z.string().meta({ description: "Shown once (fl_app_…); only its SHA-256 is stored" }) })
  .meta({ id: "CreatedAppKey" });
export const appKeyParams = z.object({ id: z.string().regex(/^[1-9][0-9]{0,17}$/) });

// ---------------------------------------------------------------------------------------------
// Scrape tokens

const scraperName = z.string().trim().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, "lowercase letters, digits, . _ - (1–63)");
export const scrapeTokenSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    createdAt: timestamp,
    createdBy: z.string(),
    revokedAt: timestamp.nullable(),
    revokedBy: z.string().nullable(),
    lastUsedAt: timestamp.nullable().meta({ description: "When it last authenticated a scrape (database clock)" }),
  })
  .meta({ id: "ScrapeToken" });
export const scrapeTokenListSchema = z.object({ items: z.array(scrapeTokenSchema) }).meta({ id: "ScrapeTokenList" });
export const createScrapeTokenBody = z.strictObject({ name: scraperName }).meta({ id: "CreateScrapeTokenBody" });
export const createdScrapeTokenSchema = scrapeTokenSchema
  .extend({ token: z.string().meta({ description: "Shown once; only its SHA-256 is stored" }) })
  .meta({ id: "CreatedScrapeToken" });
export const scrapeTokenParams = z.object({ id: z.string().regex(/^[1-9][0-9]{0,17}$/) });

// ---------------------------------------------------------------------------------------------
// Audit

export const auditQuery = z
  .strictObject({
    before: z.string().regex(/^[1-9][0-9]{0,17}$/, "an entry id").optional().meta({ description: "Entries older than this id (nextCursor)" }),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  })
  .meta({ id: "AuditQuery" });
export const auditEntrySchema = z
  .object({
    id: z.string(),
    at: timestamp,
    actor: z.string(),
    action: z.string(),
    subjectType: z.string(),
    subjectId: z.string(),
    before: z.unknown(),
    after: z.unknown(),
  })
  .meta({ id: "AuditEntry" });
export const auditPageSchema = z.object({ items: z.array(auditEntrySchema), nextCursor: z.string().nullable() }).meta({ id: "AuditPage" });

export const epochStatusSchema = z
  .object({
    epoch: z.string(),
    transition: z.object({ id: z.string(), state: z.string(), reason: z.string(), startedAt: z.string() }).nullable(),
    blocked: z.array(z.object({ adapter: z.string(), epoch: z.string(), reason: z.string(), since: z.string() })),
  })
  .meta({ id: "EpochStatus", description: "The epoch in force, a transition under way, fenced destinations left blocked" });
export const startTransitionBody = z
  .strictObject({ reason: z.string().trim().min(1, "say why the epoch must move on").max(500) })
  .meta({ id: "StartEpochTransitionBody" });
export const transitionResultSchema = z
  .object({
    transitionId: z.string(),
    fromEpoch: z.string(),
    toEpoch: z.string(),
    revokedLeases: z.number().int(),
    state: z.enum(["completed", "blocked"]),
    destinations: z.record(z.string(), z.union([z.object({ installed: z.literal(true) }), z.object({ installed: z.literal(false), error: z.string() })])),
  })
  .meta({ id: "EpochTransitionResult" });

export const staffPaths: ZodOpenApiPathsObject = {
  "/api/admin/epoch-transitions": {
    get: {
      operationId: "epochStatus",
      summary: "The current epoch, any transition under way, and blocked destinations (admin)",
      tags: ["admin"],
      responses: { ...staffResponses, "200": ok("Epoch status", epochStatusSchema) },
    },
    post: {
      operationId: "startEpochTransition",
      summary: "Move the fencing term to a new epoch after a restore or reset (admin; audited)",
      description:
        "Stops claims, lets in-flight attempts finish (then revokes the rest), opens an epoch above any seen, installs it at every fenced destination and proves a stale epoch is refused there, then resumes. A destination that fails stays blocked.",
      tags: ["admin"],
      requestBody: jsonBody(startTransitionBody),
      responses: {
        ...staffResponses,
        "200": ok("The transition's result", transitionResultSchema),
        "400": problemResponse("Invalid body"),
        "409": problemResponse("A transition is already in progress"),
      },
    },
  },
  "/api/session": {
    post: {
      operationId: "signIn",
      summary: "Sign in as staff",
      description: "Sets the session cookie (httpOnly, SameSite=Lax, Secure over HTTPS). Rate-limited per client and per account.",
      tags: ["staff"],
      requestBody: jsonBody(signInBody),
      responses: {
        "200": ok("Signed in", staffSchema),
        "400": problemResponse("Invalid body"),
        "401": problemResponse("Wrong email or password"),
        "403": problemResponse("Cross-site request"),
        "429": problemResponse("Too many attempts: see Retry-After"),
      },
    },
    get: {
      operationId: "currentStaff",
      summary: "Who is signed in",
      tags: ["staff"],
      responses: { "200": ok("The signed-in staff member", staffSchema), "401": problemResponse("Not signed in") },
    },
    delete: {
      operationId: "signOut",
      summary: "Sign out: ends the session",
      tags: ["staff"],
      responses: { "204": { description: "Signed out (or was not signed in)" }, "403": problemResponse("Cross-site request") },
    },
  },
  "/api/admin/accounts": {
    get: {
      operationId: "listAccounts",
      summary: "Staff accounts and their roles (admin)",
      tags: ["admin"],
      responses: { ...staffResponses, "200": ok("Accounts", accountListSchema) },
    },
    post: {
      operationId: "createAccount",
      summary: "Create a staff account (admin; audited)",
      tags: ["admin"],
      requestBody: jsonBody(createAccountBody),
      responses: { ...staffResponses, "201": ok("Created", accountSchema), "400": problemResponse("Invalid body"), "409": problemResponse("The email already has an account") },
    },
  },
  "/api/admin/accounts/{id}/roles": {
    put: {
      operationId: "setAccountRoles",
      summary: "Replace an account's roles (admin; audited)",
      tags: ["admin"],
      requestParams: { path: accountParams },
      requestBody: jsonBody(setRolesBody),
      responses: { ...staffResponses, "204": { description: "Roles replaced" }, "400": problemResponse("Invalid body"), "404": problemResponse("No such account") },
    },
  },
  "/api/admin/worker-tokens": {
    get: {
      operationId: "listWorkerTokens",
      summary: "Worker tokens, newest first (admin)",
      tags: ["admin"],
      responses: { ...staffResponses, "200": ok("Tokens (never their values)", workerTokenListSchema) },
    },
    post: {
      operationId: "createWorkerToken",
      summary: "Create a worker token bound to a worker name (admin; audited)",
      tags: ["admin"],
      requestBody: jsonBody(createWorkerTokenBody),
      responses: { ...staffResponses, "201": ok("The token, shown once", createdWorkerTokenSchema), "400": problemResponse("Invalid body") },
    },
  },
  "/api/admin/worker-tokens/{id}/revoke": {
    post: {
      operationId: "revokeWorkerToken",
      summary: "Revoke a worker token (admin; audited): its sessions can no longer renew, checkpoint or complete",
      tags: ["admin"],
      requestParams: { path: workerTokenParams },
      responses: { ...staffResponses, "200": ok("Revoked (or already revoked)", workerTokenSchema), "404": problemResponse("No such token") },
    },
  },
  "/api/admin/app-keys": {
    get: {
      operationId: "listAppKeys",
      summary: "App keys, newest first (admin)",
      tags: ["admin"],
      responses: { ...staffResponses, "200": ok("Keys (never their values)", appKeyListSchema) },
    },
    post: {
      operationId: "createAppKey",
      summary: "Create an app key for a backend that creates or reads its app's requests (admin; audited)",
      tags: ["admin"],
      requestBody: jsonBody(createAppKeyBody),
      responses: { ...staffResponses, "201": ok("The key, shown once", createdAppKeySchema), "400": problemResponse("Invalid body") },
    },
  },
  "/api/admin/app-keys/{id}/revoke": {
    post: {
      operationId: "revokeAppKey",
      summary: "Revoke an app key (admin; audited): the next request made with it is refused",
      tags: ["admin"],
      requestParams: { path: appKeyParams },
      responses: { ...staffResponses, "200": ok("Revoked (or already revoked)", appKeySchema), "404": problemResponse("No such key") },
    },
  },
  "/api/admin/scrape-tokens": {
    get: {
      operationId: "listScrapeTokens",
      summary: "Prometheus scrape tokens, newest first (admin)",
      tags: ["admin"],
      responses: { ...staffResponses, "200": ok("Tokens (never their values)", scrapeTokenListSchema) },
    },
    post: {
      operationId: "createScrapeToken",
      summary: "Create a scrape token for a Prometheus server (admin; audited): it reads /api/metrics/prometheus and nothing else",
      tags: ["admin"],
      requestBody: jsonBody(createScrapeTokenBody),
      responses: { ...staffResponses, "201": ok("The token, shown once", createdScrapeTokenSchema), "400": problemResponse("Invalid body") },
    },
  },
  "/api/admin/scrape-tokens/{id}/revoke": {
    post: {
      operationId: "revokeScrapeToken",
      summary: "Revoke a scrape token (admin; audited): its next scrape is refused",
      tags: ["admin"],
      requestParams: { path: scrapeTokenParams },
      responses: { ...staffResponses, "200": ok("Revoked (or already revoked)", scrapeTokenSchema), "404": problemResponse("No such token") },
    },
  },
  "/api/audit": {
    get: {
      operationId: "listAudit",
      summary: "The audit log, newest first (engineer or admin)",
      tags: ["audit"],
      requestParams: { query: auditQuery },
      responses: { ...staffResponses, "200": ok("A page of entries", auditPageSchema), "400": problemResponse("Invalid query") },
    },
  },
};
