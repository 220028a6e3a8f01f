/**
 * Handlers for the `pure` adapter: computation inside the worker, no external effect.
 * `noop` concludes at once (benchmarks); `sleep` works for `input.ms` milliseconds and stops
 * early when its authority is lost; `prepare` checks and normalises a request's input for the
 * steps after it (the demo workflow's first step).
 */
import type { StepHandler } from "../handler";

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });

export const pureHandler: StepHandler = async (context) => {
  switch (context.operation) {
    case "noop":
      return { kind: "effect", externalReference: null, result: null, verification: "direct_response" };
    case "sleep": {
      const ms = (context.input as { ms?: unknown } | null)?.ms;
      if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) throw new Error("sleep needs input.ms >= 0");
      await sleep(ms, context.signal);
      return { kind: "effect", externalReference: null, result: { sleptMs: ms }, verification: "direct_response" };
    }
    case "prepare":
      return { kind: "effect", externalReference: null, result: { prepared: context.input ?? null }, verification: "direct_response" };
    default:
      throw new Error(`pure adapter has no operation ${context.operation}`);
  }
};
