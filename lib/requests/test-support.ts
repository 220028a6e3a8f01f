/**
 * The demo workflow registered in a test database as its workers would register it, so console
 * and engine tests can create and follow real `delivery` requests. Used by *.db.test.ts only.
 */
import type { Pool } from "pg";
import { registrationOf } from "@/lib/definitions/registration";
import { registerDefinitions } from "@/lib/engine/registration";
import { registerSession } from "@/lib/engine/session";
import type { WorkflowVersion } from "@/lib/engine/types";
import { demoAdapters } from "@/lib/demo/adapters";
import { deliveryWorkflow } from "@/lib/demo/workflow";

/** The delivery workflow on adapters that would reach a destination at `destinationUrl`. */
export const deliveryFor = (destinationUrl = "http://127.0.0.1:9") => deliveryWorkflow(demoAdapters(destinationUrl));

/** What a session serves to claim delivery steps. */
export const DELIVERY_SERVED: readonly WorkflowVersion[] = [{ kind: "delivery", version: 1 }];

/** Registers the delivery workflow and its adapters through a session of its own; returns the session. */
export async function registerDelivery(pool: Pool): Promise<string> {
  const sessionId = await registerSession(pool, "direct");
  await registerDefinitions(pool, sessionId, registrationOf([deliveryFor()]));
  return sessionId;
}

/** A delivery request's creation options, as the API route passes them. */
export const deliveryRequest = (input: unknown, requester = "test", idempotencyKey: string | null = null) => ({
  kind: "delivery",
  version: null,
  input,
  idempotencyKey,
  requester,
  deadlineAt: null,
});

type RouteModule = Record<string, (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>>;

/** The app API's routes, by path pattern, and the route parameters each pattern captures. */
const APP_ROUTES: readonly { pattern: RegExp; params: readonly string[]; load: () => Promise<RouteModule> }[] = [
  { pattern: /^\/api\/requests$/, params: [], load: () => import("@/app/api/requests/route") as unknown as Promise<RouteModule> },
  { pattern: /^\/api\/requests\/([^/]+)$/, params: ["id"], load: () => import("@/app/api/requests/[id]/route") as unknown as Promise<RouteModule> },
  { pattern: /^\/api\/requests\/([^/]+)\/cancel$/, params: ["id"], load: () => import("@/app/api/requests/[id]/cancel/route") as unknown as Promise<RouteModule> },
  { pattern: /^\/api\/worker\/([^/]+)$/, params: ["operation"], load: () => import("@/app/api/worker/[operation]/route") as unknown as Promise<RouteModule> },
  { pattern: /^\/api\/events$/, params: [], load: () => import("@/app/api/events/route") as unknown as Promise<RouteModule> },
  { pattern: /^\/api\/events\/url\/([^/]+)$/, params: ["token"], load: () => import("@/app/api/events/url/[token]/route") as unknown as Promise<RouteModule> },
  { pattern: /^\/api\/schedules$/, params: [], load: () => import("@/app/api/schedules/route") as unknown as Promise<RouteModule> },
  { pattern: /^\/api\/schedules\/([^/]+)$/, params: ["name"], load: () => import("@/app/api/schedules/[name]/route") as unknown as Promise<RouteModule> },
  { pattern: /^\/api\/schedules\/([^/]+)\/pause$/, params: ["name"], load: () => import("@/app/api/schedules/[name]/pause/route") as unknown as Promise<RouteModule> },
  { pattern: /^\/api\/schedules\/([^/]+)\/resume$/, params: ["name"], load: () => import("@/app/api/schedules/[name]/resume/route") as unknown as Promise<RouteModule> },
];

/**
 * A fetch that answers the app API and the worker protocol with their real route handlers, in this process, over the
 * database in DATABASE_URL: for clients under test without a web server.
 */
export const routeFetch: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const path = new URL(request.url).pathname;
  for (const route of APP_ROUTES) {
    const match = route.pattern.exec(path);
    if (!match) continue;
    const handler = (await route.load())[request.method];
    if (!handler) return new Response(null, { status: 405 });
    const params = Object.fromEntries(route.params.map((name, index) => [name, decodeURIComponent(match[index + 1]!)]));
    return handler(request, { params: Promise.resolve(params) });
  }
  return new Response(null, { status: 404 });
};
