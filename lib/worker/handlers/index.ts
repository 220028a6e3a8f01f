import type { HandlerRegistry, StepHandler } from "../handler";
import { destinationHandlers } from "./destinations";
import { pureHandler } from "./pure";

export type HandlerOptions = {
  /** Base URL of the synthetic destination service; without it the worker runs pure steps only. */
  readonly destinationUrl?: string;
};

/** The handlers a worker process runs: one per adapter it can serve. */
export function defaultHandlers(options: HandlerOptions = {}): HandlerRegistry {
  const handlers = new Map<string, StepHandler>([["pure", pureHandler]]);
  if (options.destinationUrl) for (const [adapter, handler] of destinationHandlers(options.destinationUrl)) handlers.set(adapter, handler);
  return handlers;
}
