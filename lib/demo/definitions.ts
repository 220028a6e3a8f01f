/**
 * The demo's definitions module: what its workers serve, as an adopter's `workflows.ts` would
 * export it. The synthetic destination's address comes from FENCELINE_DESTINATION_URL. Both kinds
 * share one set of adapters: a worker defines each adapter once.
 */
import { demoAdapters } from "./adapters";
import { purchaseWorkflow } from "./purchase";
import { deliveryWorkflow } from "./workflow";

const adapters = demoAdapters(process.env.FENCELINE_DESTINATION_URL ?? "http://127.0.0.1:4100");

export const delivery = deliveryWorkflow(adapters);
export const purchase = purchaseWorkflow(adapters);
