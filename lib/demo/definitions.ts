/**
 * The demo's definitions module: what its workers serve, as an adopter's `workflows.ts` would
 * export it. The synthetic destination's address comes from FENCELINE_DESTINATION_URL.
 */
import { demoAdapters } from "./adapters";
import { deliveryWorkflow } from "./workflow";

export const delivery = deliveryWorkflow(demoAdapters(process.env.FENCELINE_DESTINATION_URL ?? "http://127.0.0.1:4100"));
