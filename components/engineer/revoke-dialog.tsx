"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRef, useState, type FormEvent } from "react";
import { toast } from "sonner";
import type { RevokeResult } from "@/lib/api/contract/engineer/steps";
import { engineerKeys, sendJson } from "./api";
import styles from "./engineer.module.css";

/**
 * Revoke the current lease: a reason, then an explicit confirmation in a modal dialog (native
 * <dialog>: focus moves in and Escape closes). The revocation is recorded; recovery still
 * decides what happens to the step from the evidence, and nothing is cancelled at the destination.
 */
export function RevokeDialog({ stepId, term }: { stepId: string; term: number | null }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [reason, setReason] = useState("");
  const queryClient = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => sendJson<RevokeResult>(`/api/steps/${stepId}/revoke`, "POST", { reason }),
    onSuccess: (result) => {
      dialog.current?.close();
      setReason("");
      toast.success(`Term ${result.revokedTerm} revoked; recovery decided: ${result.decision.category.replaceAll("_", " ")}${result.decision.detail ? ` (${result.decision.detail})` : ""}`);
    },
    onError: (error) => toast.error(`Revoke refused: ${error instanceof Error ? error.message : String(error)}`),
    onSettled: () => queryClient.invalidateQueries({ queryKey: engineerKeys.step(stepId) }),
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    revoke.mutate();
  }

  return (
    <>
      <button type="button" className={styles.danger} disabled={term === null} onClick={() => dialog.current?.showModal()} title={term === null ? "No open lease to revoke" : undefined}>
        Revoke lease…
      </button>
      <dialog ref={dialog} className={styles.dialog} aria-labelledby="revoke-title">
        <form onSubmit={submit}>
          <h2 id="revoke-title">Revoke term {term ?? "—"}?</h2>
          <p>
            The holder loses authority at once and this is recorded with your reason. Recovery then decides from the evidence — a revoke
            does not cancel anything at the destination.
          </p>
          <label htmlFor="revoke-reason">Reason</label>
          <textarea id="revoke-reason" required minLength={3} maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} />
          <div className={styles.dialogActions}>
            <button type="button" onClick={() => dialog.current?.close()}>
              Cancel
            </button>
            <button type="submit" className={styles.danger} disabled={revoke.isPending || reason.trim().length < 3}>
              {revoke.isPending ? "Revoking…" : "Confirm revoke"}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}
