/**
 * Each app key has its own budget for creating requests: past it the app gets a
 * RateLimitedError that says how long to wait, and another app is not slowed by it.
 */
import { afterAll, expect } from "vitest";
import { createClient, RateLimitedError } from "fenceline/client";
import { createAppKey } from "@/lib/auth/app-keys";
import { dbTest as test } from "@/lib/db/test-database";
import { pool } from "@/lib/db/pool";
import { registerDelivery, routeFetch } from "./test-support";

// Read when the route first creates its limiter, which happens after this line.
process.env.FENCELINE_APP_REQUEST_BURST = "3";
process.env.FENCELINE_APP_REQUESTS_PER_SECOND = "1";

afterAll(async () => {
  await pool().end();
});

test("an app past its request budget is told how long to wait; another app is not", async ({ db }) => {
  process.env.DATABASE_URL = db.url;
  await registerDelivery(db.pool);
  const clientOf = async (app: string) =>
    createClient({ url: "http://fenceline.test", apiKey: (await createAppKey(db.pool, app, ["requests:create"], "admin@test")).key, fetch: routeFetch });
  const busy = await clientOf("busy");
  const calm = await clientOf("calm");
  const create = (client: typeof busy) => client.requests.create("delivery", { recipient: "a", message: "b" });

  for (let i = 0; i < 3; i += 1) await create(busy);
  const refused = await create(busy).then(() => null, (error: unknown) => error);
  expect(refused).toBeInstanceOf(RateLimitedError);
  expect(refused).toMatchObject({ status: 429, retryAfterMs: 1_000 });
  expect((await create(calm)).status).toBe("active");
  const { rows } = await db.pool.query("SELECT requester, count(*)::int AS n FROM workflow GROUP BY requester ORDER BY requester");
  expect(rows).toEqual([{ requester: "app:busy", n: 3 }, { requester: "app:calm", n: 1 }]);
});
