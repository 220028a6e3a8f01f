/**
 * Named checkpoint hooks at every boundary a worker crosses. In production they do nothing.
 * Tests use them to wait for an exact point instead of sleeping, and to inject a fault there:
 * pause the worker, kill it, or let time pass before it goes on.
 */
import type { ClaimedStep } from "@/lib/engine/types";

/** The named checkpoints a worker reaches, in order: an attempt of a wait step ends at `parked` instead of a receipt. */
export const checkpointNames = [
  /** The claim committed: lease, attempt (checkpoint 1) and acquired event exist. */
  "claimed",
  /** Checkpoint 2 committed: the request identity is durable. */
  "identity_persisted",
  /** Checkpoint 3 committed; the destination has not been called yet. */
  "invocation_began",
  /** The destination answered; its answer is not yet durable. */
  "destination_answered",
  /** Checkpoint 4 committed: the answer is durable. */
  "response_observed",
  /** The handler returned its outcome; the receipt is about to be committed. */
  "before_receipt",
  /** Checkpoint 5 committed: the receipt exists and dependants were released. */
  "receipt_committed",
  /** A wait step (a timer, an event wait) parked: its wait is armed, and it holds no lease. */
  "parked",
] as const;

/** One of `checkpointNames`. */
export type CheckpointName = (typeof checkpointNames)[number];

export type CheckpointHooks = {
  reached(name: CheckpointName, step: ClaimedStep): Promise<void>;
};

export const noHooks: CheckpointHooks = { reached: async () => undefined };

const isCheckpointName = (value: string): value is CheckpointName =>
  (checkpointNames as readonly string[]).includes(value);

/**
 * Hooks for worker processes under test, configured by environment:
 * FENCELINE_TRACE_CHECKPOINTS=1 prints `FENCELINE_CHECKPOINT <name> <stepId> <term>` at each one;
 * FENCELINE_PAUSE_AT=<name> prints the line and then never returns, so a harness can SIGKILL or
 * SIGSTOP the process at exactly that point; with FENCELINE_RESUME_ON=SIGUSR2 it returns when
 * the process receives that signal (a stale worker that wakes up and acts on its old view).
 */
export function hooksFromEnvironment(env: NodeJS.ProcessEnv = process.env): CheckpointHooks {
  const pauseAt = env.FENCELINE_PAUSE_AT;
  if (pauseAt !== undefined && !isCheckpointName(pauseAt)) {
    throw new Error(`FENCELINE_PAUSE_AT must be one of ${checkpointNames.join(", ")}`);
  }
  const trace = env.FENCELINE_TRACE_CHECKPOINTS === "1";
  if (!trace && pauseAt === undefined) return noHooks;
  const resumeOn = env.FENCELINE_RESUME_ON;
  if (resumeOn !== undefined && resumeOn !== "SIGUSR2") throw new Error("FENCELINE_RESUME_ON must be SIGUSR2");
  return {
    reached: async (name, step) => {
      if (trace || name === pauseAt) {
        process.stdout.write(`FENCELINE_CHECKPOINT ${name} ${step.stepId} ${step.fencingTerm}\n`);
      }
      if (name === pauseAt) await new Promise<void>((resolve) => (resumeOn ? process.once(resumeOn, () => resolve()) : undefined));
    },
  };
}
