/**
 * The other waits of docs/adopting/waits.md, compiled with this project so the guide's examples
 * stay true to the package: a reminder at 9:00 in the customer's time zone, and a quote that waits
 * for its approval through a one-time URL and goes on when none comes.
 */
import { z } from "zod";
import { defineWorkflow, done } from "fenceline";

export const reminder = defineWorkflow({
  kind: "reminder",
  version: 1,
  input: z.object({ customerId: z.string(), day: z.iso.date(), timeZone: z.string() }),
})
  .timer("nineOClock", {
    milestone: { upcoming: "Reminder", current: "We'll remind you on {until}", done: "Reminder due" },
    until: (ctx) => ({ local: `${ctx.input.day}T09:00`, timeZone: ctx.input.timeZone }),
  })
  .step("remind", {
    dependsOn: ["nineOClock"],
    milestone: { upcoming: "Reminder", current: "Reminding you", done: "Reminded" },
    run: async (ctx) => done({ customerId: ctx.input.customerId, at: ctx.results.nineOClock.firedAt }),
  });

export const quote = defineWorkflow({ kind: "quote", version: 1, input: z.object({ quoteId: z.string() }) })
  .event("approval", {
    milestone: { upcoming: "Approval", current: "Waiting for your approval", done: "Approved" },
    name: "quote.approved",
    key: (ctx) => ctx.input.quoteId,
    payload: z.object({ approvedBy: z.string() }),
    timeoutMs: 7 * 24 * 3_600_000,
    onTimeout: "continue",
    url: true,
    keepEarlyEventsMs: 24 * 3_600_000,
  })
  .step("decide", {
    dependsOn: ["approval"],
    milestone: { upcoming: "Decision", current: "Deciding", done: "Decided" },
    run: async (ctx) =>
      done(ctx.results.approval.received ? { approvedBy: ctx.results.approval.payload.approvedBy } : { expiredAt: ctx.results.approval.timedOutAt }),
  });
