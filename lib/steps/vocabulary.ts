/**
 * The console's own lists, as the engineer views name them: plain constants with no imports, so
 * both the API contract and client components can use them without pulling in server code. The
 * engine's words (states, checkpoints, reasons) are in lib/engine/vocabulary.ts.
 */
export const LAB_ACTIONS = ["pause", "resume", "kill"] as const;
