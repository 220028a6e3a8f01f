/**
 * What the scorecard's Fenceline workers serve (their FENCELINE_DEFINITIONS): the fault matrix's
 * one-step delivery workflow, under its own kind, on the product's default class for steps that
 * call out (`external`: lease TTL 10 s, renewed every 3 s), so Fenceline runs with the settings an
 * adopter gets. The destination's address comes from FENCELINE_DESTINATION_URL.
 */
import { scenarioWorkflow } from "@/lib/scenarios/definitions";

export const SCORECARD_KIND = "scorecard";
export const SCORECARD_CLASS = "external";

export const scorecard = scenarioWorkflow(process.env.FENCELINE_DESTINATION_URL ?? "http://127.0.0.1:4100", SCORECARD_CLASS, SCORECARD_KIND);
