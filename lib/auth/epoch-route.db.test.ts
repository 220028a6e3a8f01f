/**
 * The epoch transition through the admin API: only admins may run it, it installs the new epoch
 * at the fenced destination, the audit log records it, and a second one while the first runs is
 * a 409.
 */
import { afterAll, expect } from "vitest";
import { GET as statusRoute, POST as transitionRoute } from "@/app/api/admin/epoch-transitions/route";
import { registeredAdapter } from "@/lib/definitions/registration";
import { demoAdapters } from "@/lib/demo/adapters";
import { startDestinationService } from "@/lib/demo/destination/service";
import { registerAdapters } from "@/lib/engine/registration";
import { pool } from "@/lib/db/pool";
import { dbTest as test } from "@/lib/db/test-database";
import { signedIn } from "./test-support";

afterAll(async () => {
  await pool().end();
});

const none = { params: Promise.resolve({}) };
const post = (body: unknown, headers: Record<string, string>) =>
  new Request("http://127.0.0.1:3000/api/admin/epoch-transitions", {
    method: "POST",
    headers: { "content-type": "application/json", origin: "http://127.0.0.1:3000", ...headers },
    body: JSON.stringify(body),
  });

test("admins move the epoch and the fenced destination takes it; others are refused; it is audited", async ({ db }) => {
  process.env.DATABASE_URL = db.url;
  const destination = await startDestinationService({ databaseUrl: db.url, port: 0 });
  process.env.FENCELINE_DESTINATION_URL = destination.url;
  // A worker serving the fenced destination registered it, with where its epoch is administered.
  await registerAdapters(db.pool, [registeredAdapter(demoAdapters(destination.url).fenced)]);
  try {
    const engineer = await signedIn(db.pool, ["engineer"]);
    const admin = await signedIn(db.pool, ["admin"]);
    expect((await transitionRoute(post({ reason: "restored" }, engineer.headers), none)).status).toBe(403);
    expect((await transitionRoute(post({ reason: "" }, admin.headers), none)).status).toBe(400);

    const response = await transitionRoute(post({ reason: "restored from last night's backup" }, admin.headers), none);
    expect(response.status).toBe(200);
    const result = (await response.json()) as { transitionId: string };
    expect(result).toMatchObject({ fromEpoch: "1", toEpoch: "2", state: "completed", destinations: { fenced: { installed: true } } });
    const installed = await (await fetch(`${destination.url}/admin/epoch`)).json();
    expect(installed).toMatchObject({ installed: "2" });

    const status = await statusRoute(new Request("http://127.0.0.1:3000/api/admin/epoch-transitions", { headers: admin.headers }), none);
    expect(await status.json()).toEqual({ epoch: "2", transition: null, blocked: [] });
    const { rows } = await db.pool.query("SELECT actor, action, subject_id, before, after FROM audit_log WHERE action = 'epoch.transition'");
    expect(rows).toEqual([
      {
        actor: admin.email,
        action: "epoch.transition",
        subject_id: result.transitionId,
        before: { epoch: "1" },
        after: expect.objectContaining({ epoch: "2", state: "completed", reason: "restored from last night's backup" }),
      },
    ]);

    await db.pool.query("INSERT INTO epoch_transition (from_epoch, reason, requested_by) VALUES (2, 'stuck', 'test')");
    expect((await transitionRoute(post({ reason: "again" }, admin.headers), none)).status).toBe(409);
  } finally {
    delete process.env.FENCELINE_DESTINATION_URL;
    await destination.close();
  }
});
