/**
 * Collects the receipts that attempts produce close together and commits them in one call.
 * Each receipt stays individually fenced inside the batch; batching only saves round trips.
 * With `claimAlongside`, the call also claims steps for the slots the batch frees
 * (Coordinator.commitAndClaim): over HTTP one exchange per batch instead of a commit and a claim.
 */
import type { ClaimedStep, ReceiptRequest, ReceiptResult, WorkflowVersion } from "@/lib/engine/types";
import type { Coordinator } from "./coordinator";

type Pending = { request: ReceiptRequest; resolve: (result: ReceiptResult) => void; reject: (error: unknown) => void };

/** How a batch claims alongside its commit; the worker keeps count of the slots. */
export type ClaimAlongside = {
  readonly served: () => readonly WorkflowVersion[];
  /** Reserves slots for a batch of `committing` receipts; how many steps to claim (0: commit only). */
  readonly reserve: (committing: number) => number;
  /** Gives back the `reserved` slots: the claimed steps take theirs (none when the call failed). */
  readonly settle: (reserved: number, claimed: readonly ClaimedStep[], sentAtMs: number) => void;
};

export class ReceiptBatcher {
  private pending: Pending[] = [];
  private scheduled = false;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly sessionId: () => string,
    private readonly maxBatch: number,
    private readonly claimAlongside: ClaimAlongside | null = null,
  ) {}

  commit(request: ReceiptRequest): Promise<ReceiptResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({ request, resolve, reject });
      if (this.pending.length >= this.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        // Receipts resolved in the same turn of the event loop share one commit.
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending.splice(0, this.maxBatch);
    if (batch.length === 0) return;
    if (this.pending.length > 0 && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    const requests = batch.map((p) => p.request);
    const alongside = this.claimAlongside;
    const reserved = alongside?.reserve(batch.length) ?? 0;
    const sentAt = performance.now();
    const call =
      alongside && reserved > 0
        ? this.coordinator.commitAndClaim(this.sessionId(), alongside.served(), requests, reserved)
        : this.coordinator.commitReceipts(this.sessionId(), requests).then((results) => ({ results, claimed: [] }));
    call.then(
      ({ results, claimed }) => {
        const byStep = new Map(results.map((result) => [result.stepId, result]));
        for (const p of batch) {
          const result = byStep.get(p.request.lease.stepId);
          if (result) p.resolve(result);
          else p.reject(new Error(`no receipt result for step ${p.request.lease.stepId}`));
        }
        if (reserved > 0) alongside!.settle(reserved, claimed, sentAt);
      },
      (error: unknown) => {
        if (reserved > 0) alongside!.settle(reserved, [], sentAt);
        batch.forEach((p) => p.reject(error));
      },
    );
  }
}
