import type { HandlerRegistry } from "../handler";
import { pureHandler } from "./pure";

/** The handlers a worker process runs: one per adapter it can serve. */
export function defaultHandlers(): HandlerRegistry {
  return new Map([["pure", pureHandler]]);
}
