/**
 * The OpenAPI document, generated from the same zod schemas the route handlers validate with.
 * Each audience's (and for engineers, each resource's) operations live in lib/api/contract/;
 * this file only joins them.
 */
import { createDocument, type ZodOpenApiPathsObject } from "zod-openapi";
import { eventPaths } from "./contract/events";
import { fairSharePaths } from "./contract/engineer/fair-share";
import { schedulePaths } from "./contract/schedules";
import { labPaths } from "./contract/engineer/lab";
import { metricsPaths } from "./contract/engineer/metrics";
import { bulkPaths } from "./contract/engineer/bulk";
import { requestPagePaths } from "./contract/engineer/request-page";
import { requestsPaths } from "./contract/engineer/requests";
import { stepsPaths } from "./contract/engineer/steps";
import { workersPaths } from "./contract/engineer/workers";
import { publicPaths } from "./contract/public";
import { staffPaths } from "./contract/staff";
import { supportPaths } from "./contract/support";
import { webhookPaths } from "./contract/webhooks";
import { workerPaths } from "./contract/worker-paths";
import { problemSchema } from "./problems";

/** Joins path objects; one path may gather operations from several groups, but never the same method twice. */
export function joinPaths(...groups: readonly ZodOpenApiPathsObject[]): ZodOpenApiPathsObject {
  const joined: ZodOpenApiPathsObject = {};
  for (const group of groups) {
    for (const [path, item] of Object.entries(group)) {
      const existing = joined[path] ?? {};
      const twice = Object.keys(item).filter((method) => method in existing);
      if (twice.length > 0) throw new Error(`openApiDocument: ${twice.join(", ")} ${path} is described twice`);
      joined[path] = { ...existing, ...item };
    }
  }
  return joined;
}

export function openApiDocument() {
  return createDocument({
    openapi: "3.1.0",
    info: {
      title: "Fenceline API",
      version: "1",
      description:
        "Multi-step requests with durable receipts. Errors are application/problem+json (RFC 9457) with a stable `code`; " +
        "`type` is urn:fenceline:problem:<code>. End users reach a request only through its tracking token.",
    },
    paths: joinPaths(publicPaths, eventPaths, staffPaths, supportPaths, requestsPaths, requestPagePaths, bulkPaths, stepsPaths, metricsPaths, workersPaths, labPaths, workerPaths, webhookPaths, fairSharePaths, schedulePaths),
    components: {
      schemas: { Problem: problemSchema },
      securitySchemes: {
        appKey: { type: "http", scheme: "bearer", description: "An app key (fl_app_…), created by an admin; scopes requests:create, requests:read, events:send, schedules:manage" },
        workerToken: { type: "http", scheme: "bearer", description: "A worker token, created by an admin; only for /api/worker/*" },
        scrapeToken: { type: "http", scheme: "bearer", description: "A scrape token (fl_scrape_…), created by an admin; only for GET /api/metrics/prometheus" },
        staffSession: { type: "apiKey", in: "cookie", name: "fenceline.session_token", description: "A staff session from POST /api/session (named __Secure-fenceline.session_token over HTTPS)" },
      },
    },
  });
}
