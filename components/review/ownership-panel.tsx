"use client";

/**
 * Who holds the case, and the three changes of holder: take it, hand it to a colleague, give it
 * back. Each carries the case version the person saw; if someone else changed the holder
 * meanwhile, the refusal (409) says who took it and when. Taking a case a colleague holds asks
 * first, naming them.
 */
import { useRouter } from "next/navigation";
import { useState } from "react";
import { toast } from "sonner";
import type { OwnershipBody } from "@/lib/api/contract/support";
import { HeldFor } from "./held-for";
import styles from "./review.module.css";

type Props = {
  caseId: string;
  version: number;
  assignee: string | null;
  assignedAt: string | null;
  /** The signed-in person, as records name them. */
  viewer: string;
  /** Support colleagues the case can be handed to (emails). */
  colleagues: readonly string[];
  /** The viewer may change the holder (support role). */
  canAct: boolean;
};

const DONE: Record<OwnershipBody["action"], string> = { take: "You hold this case now.", hand_over: "Handed over.", give_back: "Given back: nobody holds it now." };

export function OwnershipPanel(props: Props) {
  const router = useRouter();
  const [pending, setPending] = useState(false);
  const [refusal, setRefusal] = useState<string | null>(null);
  const [confirmingTake, setConfirmingTake] = useState(false);
  const [handTo, setHandTo] = useState("");
  const mine = props.assignee === props.viewer;
  const heldByOther = props.assignee !== null && !mine;
  const others = props.colleagues.filter((email) => email !== props.viewer && email !== props.assignee);

  const change = async (body: OwnershipBody) => {
    setPending(true);
    setRefusal(null);
    setConfirmingTake(false);
    try {
      const response = await fetch(`/api/review/${props.caseId}/ownership`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const answer = (await response.json()) as Record<string, unknown>;
      if (response.ok) {
        toast.success(answer.replayed ? "Nothing to change: it was already so." : DONE[body.action]);
        router.refresh();
      } else {
        setRefusal(String(answer.detail ?? response.statusText));
      }
    } catch (error) {
      setRefusal(error instanceof Error ? error.message : String(error));
    } finally {
      setPending(false);
    }
  };

  return (
    <section aria-labelledby="holder-heading" className={`stack ${styles.holder}`}>
      <h2 id="holder-heading">Who holds it</h2>
      <p data-testid="holder">
        {props.assignee === null || props.assignedAt === null ? (
          "Nobody holds this case yet."
        ) : (
          <>
            Held by <strong>{mine ? "you" : props.assignee}</strong> <HeldFor since={props.assignedAt} />
          </>
        )}
      </p>
      {refusal && (
        <div className={styles.conflict} role="alert">
          <p style={{ margin: 0 }}>
            Not changed: {refusal}{" "}
            <button type="button" onClick={() => router.refresh()}>
              Reload
            </button>
          </p>
        </div>
      )}
      {props.canAct && (
        <div className="stack">
          {confirmingTake ? (
            <div className={styles.warning} role="group" aria-labelledby="take-over-question">
              <p id="take-over-question" style={{ marginTop: 0 }}>
                {props.assignee} holds this case. Take it over from them?
              </p>
              <div className="row">
                <button type="button" className="primary" disabled={pending} onClick={() => void change({ action: "take", version: props.version })}>
                  Take it over
                </button>
                <button type="button" onClick={() => setConfirmingTake(false)}>
                  Cancel
                </button>
              </div>
            </div>
          ) : (
            <div className="row">
              {!mine && (
                <button
                  type="button"
                  className={heldByOther ? undefined : "primary"}
                  disabled={pending}
                  onClick={() => (heldByOther ? setConfirmingTake(true) : void change({ action: "take", version: props.version }))}
                >
                  {heldByOther ? "Take it over" : "Take it"}
                </button>
              )}
              {mine && (
                <button type="button" disabled={pending} onClick={() => void change({ action: "give_back", version: props.version })}>
                  Give it back
                </button>
              )}
            </div>
          )}
          {others.length > 0 && (
            <form
              className="row"
              onSubmit={(event) => {
                event.preventDefault();
                if (handTo) void change({ action: "hand_over", version: props.version, to: handTo });
              }}
            >
              <label htmlFor="hand-to">Hand to</label>
              <select id="hand-to" value={handTo} onChange={(event) => setHandTo(event.target.value)} required>
                <option value="">a colleague…</option>
                {others.map((email) => (
                  <option key={email} value={email}>
                    {email}
                  </option>
                ))}
              </select>
              <button type="submit" disabled={pending || !handTo}>
                Hand over
              </button>
            </form>
          )}
        </div>
      )}
    </section>
  );
}
