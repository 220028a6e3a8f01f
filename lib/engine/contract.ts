/** Adapter contracts as the engine reads them back from PostgreSQL (lib/engine/sql/contract.ts). */
import type { AdapterContract } from "@/lib/adapters/contract";

/** The contract column's shape: what the registration stored. */
export type StoredContract = Omit<AdapterContract, "operationClasses">;

export const contractFromStored = (stored: StoredContract | null): AdapterContract | null =>
  stored === null ? null : { ...stored, operationClasses: stored.statusQuery ? ["create", "query"] : ["create"] };
