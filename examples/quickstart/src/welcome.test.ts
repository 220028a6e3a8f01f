/**
 * The welcome workflow under the faults its recovery exists for, on the real engine and a real
 * PostgreSQL (fenceline/testing), with the greeting card service running in this process:
 *
 * - the card service applies a card and the answer is lost: one card, and the receipt says it
 *   was verified by idempotent replay (the service answered the same key again);
 * - a printed postcard goes through a print shop that promises nothing (an opaque destination):
 *   with the same fault the step waits for a person, and "confirm delivered" completes it;
 * - a worker paused past its lease comes back with a receipt to commit: it is refused, and kept
 *   as a late observation beside the receipt recovery already made.
 *
 * Run with `npm test` (node's test runner); no test waits for a lease's TTL.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { z } from "zod";
import { defineWorkflow, done, effect } from "fenceline";
import { createTestEnvironment, fakeDestination, type TestEnvironment } from "fenceline/testing";
import { startGreetingService, type GreetingService } from "./greetings.js";
import type { welcome as Welcome } from "./workflow.js";

/** A print shop that prints whatever it is sent, with no idempotency key and no way to ask. */
const printShop = fakeDestination<{ to: string; text: string }>("opaque", { name: "print-shop" });

const postcard = defineWorkflow({ kind: "postcard", version: 1, input: z.object({ name: z.string().min(1) }), title: "Postcard for {name}" })
  .step("compose", {
    milestone: { upcoming: "Your postcard", current: "Writing your postcard", done: "Postcard written" },
    run: async (ctx) => done({ text: `Greetings, ${ctx.input.name}!` }),
  })
  .step("print", {
    adapter: printShop.adapter,
    dependsOn: ["compose"],
    milestone: { upcoming: "Printing", current: "Printing your postcard", done: "Postcard printed", service: "the print shop" },
    run: async (ctx) => effect(await ctx.invoke({ to: ctx.input.name, text: ctx.results.compose.text })),
  });

let service: GreetingService;
let env: TestEnvironment;
let welcome: typeof Welcome;
const cardsTo = (name: string) => service.cards().filter((card) => card.to === name);

before(async () => {
  service = await startGreetingService(0);
  // The workflow reads where the service is when it loads: load it once the service listens.
  process.env.GREETINGS_URL = service.url;
  ({ welcome } = await import("./workflow.js"));
  env = await createTestEnvironment({ workflows: [welcome, postcard] });
});

after(async () => {
  await env?.close();
  await service?.close();
});

test("a card sent with its answer lost is sent once, and its receipt is verified by idempotent replay", async () => {
  env.faults.answerLost({ step: "send" });
  const request = await env.createRequest(welcome, { name: "Ada" });
  await env.waitForRequest(request.id, "completed");

  assert.equal(cardsTo("Ada").length, 1);
  const send = await env.step(request.id, "send");
  assert.deepEqual(
    send.receipts.map((receipt) => [receipt.verificationMethod, receipt.externalReference]),
    [["idempotent_replay", cardsTo("Ada")[0]!.id]],
  );
  assert.equal(send.attempts.length, 2);
});

test("a postcard printed with its answer lost waits for a person; confirming delivery completes the request", async () => {
  env.faults.answerLost({ step: "print" });
  const request = await env.createRequest(postcard, { name: "Grace" });
  const open = await env.waitForReviewCase(request.id, "print");
  assert.equal((await env.progress(request.id)).headline.state, "needs_review");

  const [printed] = printShop.effects;
  assert.equal(printShop.effects.length, 1);
  await env.resolveReviewCase(open.id, { resolution: "confirm_delivered", externalReference: printed!.externalReference, note: "the shop has it" });
  await env.waitForRequest(request.id, "completed");

  const print = await env.step(request.id, "print");
  assert.deepEqual(print.receipts.map((receipt) => [receipt.verificationMethod, receipt.externalReference]), [["manual_review", printed!.externalReference]]);
  assert.equal(printShop.effects.length, 1, "nothing was printed again");
});

test("a worker paused past its lease comes back to a refused receipt, kept as a late observation", async () => {
  const paused = env.faults.pauseAt("before_receipt", { step: "send" });
  const request = await env.createRequest(welcome, { name: "Linus" });
  const stopped = await paused.reached;
  // Past the lease's expiry on the database clock: recovery settles the step from its evidence.
  await env.expireLease(stopped);
  await env.waitForRequest(request.id, "completed");

  paused.resume();
  const send = await env.waitForStep(request.id, "send", "keeps the paused worker's late receipt", (step) => step.lateObservations.length === 1);
  // A renewal it sent on waking may be refused too; the receipt is the write that matters here.
  assert.deepEqual(
    send.fencingRejections.filter((rejection) => rejection.operation === "commit_receipt").map((rejection) => [rejection.presentedTerm, rejection.reason]),
    [[1, "expired"]],
  );
  assert.equal(send.lateObservations[0]!.externalReference, cardsTo("Linus")[0]!.id);
  assert.equal(send.receipts.length, 1);
  assert.equal(cardsTo("Linus").length, 1);
});
