/**
 * The permit rules a worker follows on its side (lib/engine/permit.ts has the statements): how
 * long an unanswered call's permit stays held, and telling a granted permit from a refusal.
 * No imports beyond types, so the worker runtime can use them without the engine's SQL.
 */
import type { Permit, PermitRefusal } from "./types";

/** How long after expiry an unanswered call's permit stays held, in permit lifetimes: longer than any call can run. */
export const HELD_PERMIT_FACTOR = 3;

/**
 * A call under a destination's rate starts within this long of the worker asking for its permit,
 * or not at all (the worker waits and asks again): a call slot taken long before its call could
 * crowd the next second at the destination.
 */
export const CALL_START_WITHIN_MS = 100;

/**
 * How much longer than a second a destination's call slot stays used: room for a call that starts
 * as late as CALL_START_WITHIN_MS allows, and as much again for the trip to the destination
 * varying. A destination so gets at most its declared calls in any second and, kept busy, about
 * 1000 / (1000 + RATE_MARGIN_MS) of them.
 */
export const RATE_MARGIN_MS = 2 * CALL_START_WITHIN_MS;

export const isPermit = (outcome: Permit | PermitRefusal): outcome is Permit => "permitId" in outcome;
