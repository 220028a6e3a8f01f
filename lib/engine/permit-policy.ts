/**
 * The permit rules a worker follows on its side (lib/engine/permit.ts has the statements): how
 * long an unanswered call's permit stays held, and telling a granted permit from a refusal.
 * No imports beyond types, so the worker runtime can use them without the engine's SQL.
 */
import type { Permit, PermitRefusal } from "./types";

/** How long after expiry an unanswered call's permit stays held, in permit lifetimes: longer than any call can run. */
export const HELD_PERMIT_FACTOR = 3;

export const isPermit = (outcome: Permit | PermitRefusal): outcome is Permit => "permitId" in outcome;
