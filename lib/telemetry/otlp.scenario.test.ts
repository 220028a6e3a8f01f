/**
 * One trace across real processes: the test process plays the app (its span around the create)
 * and the server (the fenceline.request span), real worker processes run the attempts, every
 * process exports with the OpenTelemetry SDK over OTLP/HTTP (JSON) to a receiver in the test, and
 * a real HTTP destination records the traceparent it is sent. Properties:
 *
 * - one trace from the app's span through create, claim, attempt, the adapter's call (the
 *   destination sees the call span's traceparent) and the receipt, across two processes;
 * - a worker SIGKILLed mid-attempt: the rescuer's recovery decision and its second attempt
 *   continue the same trace, under the request's span;
 * - a stale worker (its lease expired on the database clock while it waited at its last
 *   checkpoint, then woken) whose receipt is refused: the fencing rejection is an event on its own
 *   attempt's span, exported by that worker;
 * - nothing from the input appears in any exported attribute or event.
 */
import { context, trace, type Span } from "@opentelemetry/api";
import { afterAll, afterEach, beforeAll, expect, vi } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { run } from "@/lib/engine/db";
import { truncateEngineTables } from "@/lib/engine/test-support";
import { expireLease } from "@/lib/testing/sql";
import { createRequest } from "@/lib/requests/create";
import { createFastClass } from "@/lib/worker/test-definitions";
import { spawnWorker, stopAll, type WorkerProcess } from "@/lib/worker/test-process";
import { startTelemetry, stopTelemetry } from "./start";
import { startOtlpReceiver, startRecordingDestination, type OtlpReceiver, type ReceivedSpan, type RecordingDestination } from "./test-receiver";

const MARKER = "marker-77e0-never-in-a-span";
let receiver: OtlpReceiver;
let destination: RecordingDestination;
const started: WorkerProcess[] = [];

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  destination = await startRecordingDestination();
  // This process is the app and the server: it exports like the workers do.
  Object.assign(process.env, otelEnv("trace-test-app"));
  // The app's SDK follows its active span, as an app's does.
  expect(await startTelemetry({ serviceName: "unused", activeContext: true })).not.toBeNull();
});

afterAll(async () => {
  await stopTelemetry();
  await receiver?.close();
  await destination?.close();
});

afterEach(async () => {
  await stopAll(started.splice(0));
});

test.beforeEach(async ({ db }) => {
  await truncateEngineTables(db.pool);
  await createFastClass(db.pool);
});

function otelEnv(service: string): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_SERVICE_NAME: service,
    OTEL_BSP_SCHEDULE_DELAY: "100",
  };
}

const worker = (url: string, service: string, env: Record<string, string> = {}) => {
  const spawned = spawnWorker(url, {
    ...otelEnv(service),
    FENCELINE_DEFINITIONS: "lib/telemetry/test-definitions.ts",
    TRACE_TEST_DESTINATION_URL: destination.url,
    FENCELINE_RECOVERY_INTERVAL_MS: "300",
    FENCELINE_POLL_INTERVAL_MS: "200",
    ...env,
  });
  started.push(spawned);
  return spawned;
};

/** Creates a request as the route does, inside the app's span; returns both. */
async function createInAppSpan(pool: import("pg").Pool, orderId: string): Promise<{ app: Span; requestId: string }> {
  const app = trace.getTracer("the-app").startSpan("app.checkout");
  const { request } = await context.with(trace.setSpan(context.active(), app), () =>
    createRequest(pool, { kind: "otlp-traced-call", version: null, input: { orderId, note: MARKER }, idempotencyKey: null, requester: "test", deadlineAt: null }),
  );
  app.end();
  return { app, requestId: request.id };
}

const inTrace = (spans: readonly ReceivedSpan[], traceId: string) => spans.filter((span) => span.traceId === traceId);
const one = (spans: readonly ReceivedSpan[], predicate: (span: ReceivedSpan) => boolean, what: string) => {
  const found = spans.filter(predicate);
  expect(found.map((span) => `${span.service}/${span.name}`), what).toHaveLength(1);
  return found[0]!;
};
const attemptEnded = (traceId: string, term: string, outcome: string) => (spans: readonly ReceivedSpan[]) =>
  spans.some((span) => span.traceId === traceId && span.name === "fenceline.attempt" && span.attributes["fenceline.fencing_term"] === term && span.attributes["fenceline.outcome"] === outcome);

test("one trace from the app's span through create, claim, attempt, the destination call and the receipt", { timeout: 60_000 }, async ({ db }) => {
  const running = worker(db.url, "worker-a");
  await running.waitForLine(/FENCELINE_WORKER_READY/);
  const { app, requestId } = await createInAppSpan(db.pool, "o-1");
  const traceId = app.spanContext().traceId;

  const spans = inTrace(
    await receiver.waitFor((all) => attemptEnded(traceId, "1", "completed")(all) && all.some((span) => span.traceId === traceId && span.name === "app.checkout")),
    traceId,
  );
  const appSpan = one(spans, (span) => span.name === "app.checkout", "the app's span");
  const created = one(spans, (span) => span.name === "fenceline.request", "the request's span");
  const step = one(spans, (span) => span.name === "fenceline.step", "the claim's span");
  const attempt = one(spans, (span) => span.name === "fenceline.attempt", "the attempt's span");
  const call = one(spans, (span) => span.name === "fenceline.adapter.call", "the call's span");
  expect(appSpan.parentSpanId).toBeNull();
  expect([created.service, created.parentSpanId, created.attributes["fenceline.request.id"]]).toEqual(["trace-test-app", appSpan.spanId, requestId]);
  expect([step.service, step.parentSpanId]).toEqual(["worker-a", created.spanId]);
  expect(attempt.parentSpanId).toBe(step.spanId);
  expect(call.parentSpanId).toBe(attempt.spanId);
  expect(step.attributes).toMatchObject({ "fenceline.kind": "otlp-traced-call", "fenceline.request.id": requestId });
  expect(attempt.attributes).toMatchObject({
    "fenceline.step": "send",
    "fenceline.fencing_term": "1",
    "fenceline.checkpoint": "receipt_committed",
    "fenceline.outcome": "completed",
    "fenceline.verification_method": "direct_response",
  });
  expect(destination.calls.filter((seen) => seen.body.includes('"o-1"')).map((seen) => seen.traceparent)).toEqual([`00-${traceId}-${call.spanId}-01`]);

  // Nothing from the input, in any process's spans.
  const strings = receiver.spans.flatMap((span) => [...Object.values(span.attributes), ...span.events.flatMap((event) => Object.values(event.attributes))]).map(String);
  expect(strings.filter((value) => value.includes(MARKER) || value.includes("o-1"))).toEqual([]);
});

test("a recovery after a SIGKILLed worker continues the trace with the second attempt's span", { timeout: 60_000 }, async ({ db }) => {
  const victim = worker(db.url, "victim", { FENCELINE_PAUSE_AT: "invocation_began" });
  await victim.waitForLine(/FENCELINE_WORKER_READY/);
  const { app, requestId } = await createInAppSpan(db.pool, "o-2");
  const traceId = app.spanContext().traceId;
  await victim.waitForLine(/FENCELINE_CHECKPOINT invocation_began \S+ 1/);
  victim.process.kill("SIGKILL");
  await victim.exited;
  const rescuer = worker(db.url, "rescuer");
  await rescuer.waitForLine(/FENCELINE_WORKER_READY/);

  const spans = inTrace(await receiver.waitFor(attemptEnded(traceId, "2", "completed")), traceId);
  const created = one(spans, (span) => span.name === "fenceline.request", "the request's span");
  expect(created.attributes["fenceline.request.id"]).toBe(requestId);
  const recovery = one(spans, (span) => span.name === "fenceline.recovery", "the recovery decision");
  expect([recovery.service, recovery.parentSpanId]).toEqual(["rescuer", created.spanId]);
  // The invocation began at an idempotent destination: retried with the same key.
  expect(recovery.attributes).toMatchObject({ "fenceline.recovery.category": "retry_same_key", "fenceline.fencing_term": "1", "fenceline.checkpoint": "invocation_began" });
  expect(recovery.events.map((event) => event.name)).toContain("fenceline.lease_expired");
  const step = one(spans, (span) => span.name === "fenceline.step" && span.attributes["fenceline.fencing_term"] === "2", "the second claim");
  expect([step.service, step.parentSpanId]).toEqual(["rescuer", created.spanId]);
  const attempt = one(spans, (span) => span.name === "fenceline.attempt", "the second attempt (the victim's never ended)");
  expect(attempt.parentSpanId).toBe(step.spanId);
  expect(attempt.attributes).toMatchObject({ "fenceline.attempt.mode": "retry_same_identity", "fenceline.attempt.number": 2 });
});

test("a stale worker's refused receipt is an event on its own attempt's span", { timeout: 60_000 }, async ({ db }) => {
  const stale = worker(db.url, "stale-worker", { FENCELINE_PAUSE_AT: "before_receipt", FENCELINE_RESUME_ON: "SIGUSR2" });
  await stale.waitForLine(/FENCELINE_WORKER_READY/);
  const { app, requestId } = await createInAppSpan(db.pool, "o-3");
  const traceId = app.spanContext().traceId;
  const paused = await stale.waitForLine(/FENCELINE_CHECKPOINT before_receipt \S+ 1/);
  // Its lease ends on the database clock while it waits with the answer recorded: from now on it
  // is stale (a SIGSTOP could land inside a renewal's transaction and hide the lease from recovery).
  expect(await run(db.pool, expireLease, [paused.split(" ")[2], "1"])).toHaveLength(1);
  const rescuer = worker(db.url, "rescuer");
  await rescuer.waitForLine(/FENCELINE_WORKER_READY/);
  await vi.waitFor(async () => {
    const { rows } = await db.pool.query("SELECT status FROM workflow WHERE id = $1", [requestId]);
    expect(rows[0].status).toBe("completed");
  }, { timeout: 20_000, interval: 100 });

  // Woken: it goes on to commit the receipt it prepared under term 1.
  stale.process.kill("SIGUSR2");
  const spans = inTrace(await receiver.waitFor(attemptEnded(traceId, "1", "authority_lost")), traceId);
  const attempt = one(spans, (span) => span.name === "fenceline.attempt", "the stale worker's attempt");
  expect(attempt.service).toBe("stale-worker");
  const rejection = attempt.events.find((event) => event.name === "fenceline.fencing_rejection" && event.attributes["fenceline.operation"] === "commit_receipt");
  expect(rejection?.attributes).toMatchObject({ "fenceline.reason": "expired", "fenceline.fencing_term": "1" });
  expect(attempt.events.map((event) => event.name)).toContain("fenceline.late_observation");
  // Decided by whichever worker's recovery pass came first (the stale one's loops still run).
  const recovery = one(spans, (span) => span.name === "fenceline.recovery", "the recovery decision");
  expect(recovery.attributes["fenceline.recovery.category"]).toBe("reconcile");
});
