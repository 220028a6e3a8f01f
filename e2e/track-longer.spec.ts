/**
 * "Taking longer than usual" on /track, in the browser: a request that has waited on its first
 * step past that step's usual time says so calmly, with what happens next; one under it does not.
 *
 * The history the threshold reads is this test's own, in the e2e server's database: a kind of
 * its own (the delivery workflow under another name) that no worker serves, so nothing moves its
 * requests but this test. Ten of them were made an hour ago and their first step settled after
 * 10, 20, … 100 s, so that step's 90th percentile is 91 s (lib/projection/sql.ts); the two
 * requests under test have waited 75 s (past the 60 s floor, under the percentile) and 150 s.
 */
import pg from "pg";
import { releaseEmbeddedCluster, resolveDatabaseUrl } from "../lib/db/database";
import { engineSchema, searchPathOption } from "../lib/db/schema.mjs";
import { registrationOf } from "../lib/definitions/registration";
import { demoAdapters } from "../lib/demo/adapters";
import { deliveryWorkflow } from "../lib/demo/workflow";
import { registerDefinitions } from "../lib/engine/registration";
import { registerSession, stopSession } from "../lib/engine/session";
import { LONGER_THAN_USUAL } from "../lib/projection/sql";
import { expect, test, type APIRequestContext } from "./fixtures";

const KIND = "delivery-longer-e2e";
const UNDER_SECONDS = 75;
const PAST_SECONDS = 150;

let pool: pg.Pool;
let sessionId: string;

test.beforeAll(async () => {
  const { url } = await resolveDatabaseUrl({ database: process.env.E2E_DATABASE ?? "e2e" });
  pool = new pg.Pool({ connectionString: url, max: 2, options: searchPathOption(engineSchema()) });
  sessionId = await registerSession(pool, "direct");
  // The destination is never called: no worker runs this kind.
  await registerDefinitions(pool, sessionId, registrationOf([{ ...deliveryWorkflow(demoAdapters("http://127.0.0.1:9")), kind: KIND }]));
});

test.afterAll(async () => {
  // The test's requests end, so no later figure counts them in flight.
  await pool.query(`UPDATE workflow SET status = 'cancelled', updated_at = now() WHERE kind = $1 AND status = 'active'`, [KIND]);
  await stopSession(pool, sessionId, "e2e test done");
  await pool.end();
  await releaseEmbeddedCluster();
});

/** A request of the test's kind through the app API, as an app makes one; its id and tracking link. */
async function createRequest(request: APIRequestContext, recipient: string): Promise<{ id: string; trackUrl: string }> {
  const response = await request.post("/api/requests", { data: { kind: KIND, input: { recipient, message: "hello", deliverVia: "idempotent" } } });
  expect(response.status()).toBe(201);
  return (await response.json()) as { id: string; trackUrl: string };
}

/** Moves request `id` back in time by `seconds`: it has waited that long on its first step. */
const madeAgo = (id: string, seconds: number) =>
  pool.query(`UPDATE workflow SET created_at = now() - make_interval(secs => $2) WHERE id = $1`, [id, seconds]);

test("past its step's usual time the page says so calmly, with what happens next; under it, it does not", async ({ page, request }) => {
  for (let k = 1; k <= LONGER_THAN_USUAL.minSamples; k += 1) {
    const { id } = await createRequest(request, `earlier${k}@example.test`);
    await pool.query(
      `WITH made AS (UPDATE workflow SET created_at = now() - interval '1 hour' WHERE id = $1 RETURNING created_at)
       UPDATE step s SET state = 'completed', completed_at = made.created_at + make_interval(secs => $2 * 10), updated_at = now()
       FROM made WHERE s.workflow_id = $1 AND s.name = 'prepare'`,
      [id, k],
    );
  }
  const under = await createRequest(request, "under@example.test");
  const past = await createRequest(request, "past@example.test");
  await madeAgo(under.id, UNDER_SECONDS);
  await madeAgo(past.id, PAST_SECONDS);

  await page.goto(past.trackUrl);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Delivery to past@example.test");
  const pastNext = page.getByText("What happens next:").locator("..");
  await expect(pastNext).toContainText(
    "This is taking longer than usual to get started. Nothing is needed from you: it goes ahead by itself, and this page updates as soon as it does.",
  );
  await expect(pastNext).toContainText(/If you'd like to ask about it, quote FL-[0-9A-F]{4}-[0-9A-F]{4}\./);

  await page.goto(under.trackUrl);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Delivery to under@example.test");
  const underNext = page.getByText("What happens next:").locator("..");
  await expect(underNext).toContainText("It will be sent on shortly. Nothing is needed from you.");
  await expect(page.getByText(/longer than usual/)).toHaveCount(0);
});
