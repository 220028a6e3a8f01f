/**
 * Collects the receipts that attempts produce close together and commits them in one call.
 * Each receipt stays individually fenced inside the batch; batching only saves round trips.
 */
import type { ReceiptRequest, ReceiptResult } from "@/lib/engine/types";
import type { Coordinator } from "./coordinator";

type Pending = { request: ReceiptRequest; resolve: (result: ReceiptResult) => void; reject: (error: unknown) => void };

export class ReceiptBatcher {
  private pending: Pending[] = [];
  private scheduled = false;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly sessionId: () => string,
    private readonly maxBatch: number,
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
    this.coordinator.commitReceipts(this.sessionId(), batch.map((p) => p.request)).then(
      (results) => {
        const byStep = new Map(results.map((result) => [result.stepId, result]));
        for (const p of batch) {
          const result = byStep.get(p.request.lease.stepId);
          if (result) p.resolve(result);
          else p.reject(new Error(`no receipt result for step ${p.request.lease.stepId}`));
        }
      },
      (error: unknown) => batch.forEach((p) => p.reject(error)),
    );
  }
}
