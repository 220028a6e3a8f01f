/**
 * The workers view shows liveness and the leases held now, never more; the fault lab signals only
 * a live worker process on this machine, and outside demo mode it does not exist at all.
 */
import { hostname } from "node:os";
import { describe, expect } from "vitest";
import { signedIn } from "@/lib/auth/test-support";
import { dbTest as test } from "@/lib/db/test-database";
import { claimSteps } from "@/lib/engine/lease";
import { registerSession, stopSession } from "@/lib/engine/session";
import { createSingleStepWorkflows, servedFor } from "@/lib/engine/test-support";
import { signalWorker } from "@/lib/lab/signal";
import { listWorkers } from "./list";

describe("workers", () => {
  test("lists sessions live first, with their heartbeat age and open leases", async ({ db }) => {
    await createSingleStepWorkflows(db.pool, 2, { adapter: "pure", operation: "noop", stepClass: "pure" });
    const live = await registerSession(db.pool, "direct", 4242);
    const stopped = await registerSession(db.pool, "http", 4343);
    await stopSession(db.pool, stopped, "shutdown");
    await claimSteps(db.pool, live, servedFor("pure"), 2);

    const workers = await listWorkers(db.pool, { lab: false });
    expect(workers.sessions.map((s) => s.id)).toEqual([live, stopped]);
    expect(workers.sessions[0]).toMatchObject({ host: hostname(), pid: 4242, onThisHost: true, stoppedAt: null });
    expect(workers.sessions[0]!.leases).toHaveLength(2);
    expect(workers.sessions[0]!.leases[0]).toMatchObject({ fencingTerm: 1, stepName: "only", expired: false });
    expect(workers.sessions[1]).toMatchObject({ stopReason: "shutdown", leases: [] });
  });

  test("the lab refuses a stopped session, another host, a process that is not a worker, and an unknown session", async ({ db }) => {
    const sent: [number, string][] = [];
    const send = (pid: number, signal: NodeJS.Signals) => void sent.push([pid, signal]);
    const live = await registerSession(db.pool, "direct", 5151);
    const stopped = await registerSession(db.pool, "direct", 5252);
    await stopSession(db.pool, stopped, "shutdown");
    const elsewhere = await registerSession(db.pool, "http", 5353);
    await db.pool.query("UPDATE worker_session SET host = 'some-other-host' WHERE id = $1", [elsewhere]);

    await expect(signalWorker(db.pool, stopped, "kill", { send, isWorker: async () => true })).rejects.toMatchObject({ code: "signal_refused", refusal: "session_stopped" });
    await expect(signalWorker(db.pool, elsewhere, "pause", { send, isWorker: async () => true })).rejects.toMatchObject({ code: "signal_refused", refusal: "other_host" });
    await expect(signalWorker(db.pool, live, "pause", { send, isWorker: async () => false })).rejects.toMatchObject({ code: "signal_refused", refusal: "not_a_worker" });
    await expect(signalWorker(db.pool, "00000000-0000-4000-8000-000000000000", "pause", { send })).rejects.toMatchObject({ code: "not_found" });
    expect(sent).toEqual([]);

    expect(await signalWorker(db.pool, live, "pause", { send, isWorker: async () => true })).toEqual({ sessionId: live, pid: 5151, action: "pause", signal: "SIGSTOP" });
    expect(await signalWorker(db.pool, live, "resume", { send, isWorker: async () => true })).toMatchObject({ signal: "SIGCONT" });
    expect(sent).toEqual([[5151, "SIGSTOP"], [5151, "SIGCONT"]]);
  });

  test("outside demo mode the lab routes answer 404, and the workers route (engineers only) says the lab is off", async ({ db }) => {
    process.env.DATABASE_URL = db.url;
    delete process.env.FENCELINE_MODE;
    const faults = await import("@/app/api/lab/faults/route");
    const signal = await import("@/app/api/lab/workers/[sessionId]/[action]/route");
    const workers = await import("@/app/api/workers/route");
    const none = { params: Promise.resolve({}) };
    expect((await faults.GET(new Request("http://localhost/api/lab/faults"), none)).status).toBe(404);
    const put = new Request("http://localhost/api/lab/faults", { method: "PUT", headers: { "content-type": "application/json" }, body: "{}" });
    expect((await faults.PUT(put, none)).status).toBe(404);
    const kill = await signal.POST(new Request("http://localhost/api/lab/workers/x/kill", { method: "POST" }), {
      params: Promise.resolve({ sessionId: "00000000-0000-4000-8000-000000000000", action: "kill" }),
    });
    expect(kill.status).toBe(404);
    expect(await kill.json()).toMatchObject({ detail: expect.stringContaining("demo mode") });
    expect((await workers.GET(new Request("http://localhost/api/workers"), none)).status).toBe(401);
    const engineer = await signedIn(db.pool, ["engineer"]);
    const listed = await workers.GET(new Request("http://localhost/api/workers", { headers: engineer.headers }), none);
    expect(await listed.json()).toMatchObject({ lab: false });
    await (await import("@/lib/db/pool")).pool().end();
  });
});
