"use client";

/**
 * The decision column: three resolutions, each with its required fields and its consequence
 * stated before the button. The version the person saw travels with the decision; if someone
 * else resolved the case meanwhile, the answer (409) is shown inline with who and when. A case a
 * colleague holds says so before the form, and resolving it asks for a confirmation naming them.
 */
import { useRouter } from "next/navigation";
import { useRef, useState, type FormEvent } from "react";
import { toast } from "sonner";
import { Time } from "@/components/ui/time";
import type { ReviewResolution, ReviewStatus } from "@/lib/engine/vocabulary";
import styles from "./review.module.css";

type Props = {
  caseId: string;
  version: number;
  status: ReviewStatus;
  resolution: ReviewResolution | null;
  resolvedBy: string | null;
  resolvedAt: string | null;
  resolutionNote: string | null;
  externalReference: string | null;
  safeToRetry: boolean;
  destinationName: string;
  requestActive: boolean;
  /** The colleague who holds the case, when it is not the person looking at it. */
  heldBy: string | null;
};

type Conflict = { title: string; detail: string; resolvedBy?: string | null; resolvedAt?: string | null; resolution?: string | null };

const WORDS: Record<ReviewResolution, string> = {
  confirm_delivered: "Confirm delivered",
  confirm_not_delivered: "Confirm not delivered",
  abandon: "Abandon",
};

export function ResolutionPanel(props: Props) {
  const router = useRouter();
  const [choice, setChoice] = useState<ReviewResolution>("confirm_delivered");
  const [pending, setPending] = useState(false);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [confirming, setConfirming] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const confirmed = useRef(false);

  if (props.status === "resolved" && props.resolution) {
    return (
      <div className={styles.resolved} role="status">
        <p style={{ margin: 0 }}>
          <strong>{WORDS[props.resolution]}</strong> by {props.resolvedBy} <Time value={props.resolvedAt} />
        </p>
        {props.externalReference && (
          <p style={{ margin: "0.3rem 0 0" }}>
            External reference <code>{props.externalReference}</code>
          </p>
        )}
        {props.resolutionNote && <p style={{ margin: "0.3rem 0 0" }}>Note: {props.resolutionNote}</p>}
      </div>
    );
  }

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (props.heldBy !== null && !confirmed.current) {
      setConfirming(true);
      return;
    }
    confirmed.current = false;
    setConfirming(false);
    const fields = new FormData(event.currentTarget);
    const field = (name: string) => String(fields.get(name) ?? "");
    const body =
      choice === "confirm_delivered"
        ? { resolution: choice, version: props.version, externalReference: field("externalReference"), note: field("note") }
        : choice === "confirm_not_delivered"
          ? { resolution: choice, version: props.version, note: field("note") }
          : { resolution: choice, version: props.version, customerReason: field("customerReason"), note: field("note") };
    setPending(true);
    setConflict(null);
    try {
      const response = await fetch(`/api/review/${props.caseId}/resolution`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const answer = (await response.json()) as Record<string, unknown>;
      if (response.ok) {
        toast.success(answer.replayed ? "This decision was already recorded." : `${WORDS[choice]}: recorded.`);
        router.refresh();
      } else if (response.status === 409) {
        setConflict(answer as unknown as Conflict);
        toast.error(String(answer.title ?? "Conflict"));
      } else {
        toast.error(`Not recorded: ${String(answer.detail ?? response.statusText)}`);
      }
    } catch (error) {
      toast.error(`Not recorded: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      setPending(false);
    }
  };

  return (
    <form ref={form} onSubmit={submit} className="stack" aria-describedby={conflict ? "resolution-conflict" : undefined}>
      {props.heldBy !== null && (
        <p className={styles.warning} role="note">
          <strong>{props.heldBy}</strong> holds this case. You may still decide it; you will be asked to confirm.
        </p>
      )}
      {conflict && (
        <div id="resolution-conflict" className={styles.conflict} role="alert">
          {conflict.resolvedBy && conflict.resolvedAt ? (
            <p style={{ margin: 0 }}>
              Already resolved by <strong>{conflict.resolvedBy}</strong> at <Time value={conflict.resolvedAt} />
              {conflict.resolution ? ` (${conflict.resolution.replaceAll("_", " ")})` : ""}.{" "}
              <button type="button" onClick={() => router.refresh()}>
                Show it
              </button>
            </p>
          ) : (
            <p style={{ margin: 0 }}>
              {conflict.detail}{" "}
              <button type="button" onClick={() => router.refresh()}>
                Reload
              </button>
            </p>
          )}
        </div>
      )}

      <fieldset className={styles.choices}>
        <legend>What did you find?</legend>
        <label className={styles.choice}>
          <input type="radio" name="resolution" value="confirm_delivered" checked={choice === "confirm_delivered"} onChange={() => setChoice("confirm_delivered")} />
          <span>
            <strong>Confirm delivered</strong>
            <span className={styles.hint}>It reached the destination. A receipt is written and the request continues.</span>
          </span>
        </label>
        <label className={styles.choice}>
          <input
            type="radio"
            name="resolution"
            value="confirm_not_delivered"
            checked={choice === "confirm_not_delivered"}
            onChange={() => setChoice("confirm_not_delivered")}
          />
          <span>
            <strong>Confirm not delivered</strong>
            <span className={styles.hint}>It never arrived. It is sent again with the same request identity.</span>
          </span>
        </label>
        <label className={styles.choice}>
          <input type="radio" name="resolution" value="abandon" checked={choice === "abandon"} onChange={() => setChoice("abandon")} />
          <span>
            <strong>Abandon</strong>
            <span className={styles.hint}>Stop here. The customer sees “Could not be completed” with your reason.</span>
          </span>
        </label>
      </fieldset>

      {choice === "confirm_delivered" && (
        <div className={styles.field}>
          <label htmlFor="externalReference">External reference</label>
          <input id="externalReference" name="externalReference" maxLength={200} autoComplete="off" aria-describedby="externalReference-hint" />
          <p id="externalReference-hint" className={styles.hint}>
            The reference {props.destinationName} shows for this request. If it shows none, leave this empty and say below how you
            confirmed delivery: the receipt records it.
          </p>
        </div>
      )}
      {choice === "confirm_not_delivered" && !props.safeToRetry && (
        <p className={styles.warning} role="note">
          {props.destinationName} does not deduplicate: if it did arrive after all, sending again delivers it twice. Confirm only
          after checking.
        </p>
      )}
      {choice === "confirm_not_delivered" && !props.requestActive && (
        <p className={styles.warning} role="note">
          This request has ended, so nothing would be sent again: confirm delivered or abandon instead.
        </p>
      )}
      {choice === "abandon" && (
        <div className={styles.field}>
          <label htmlFor="customerReason">Reason the customer sees</label>
          <textarea id="customerReason" name="customerReason" required maxLength={500} rows={2} aria-describedby="customerReason-hint" />
          <p id="customerReason-hint" className={styles.hint}>
            Plain words, shown on their tracking page.
          </p>
        </div>
      )}
      <div className={styles.field}>
        <label htmlFor="note">{choice === "confirm_delivered" ? "How you confirmed it (required without a reference)" : "Why (recorded on the case)"}</label>
        <textarea id="note" name="note" required={choice !== "confirm_delivered"} maxLength={2000} rows={3} />
      </div>
      {confirming && props.heldBy !== null ? (
        <div className={styles.warning} role="group" aria-labelledby="resolve-anyway-question">
          <p id="resolve-anyway-question" style={{ marginTop: 0 }}>
            {props.heldBy} holds this case. {WORDS[choice]} anyway, instead of them?
          </p>
          <div className="row">
            <button
              type="button"
              className="primary"
              disabled={pending}
              onClick={() => {
                confirmed.current = true;
                form.current?.requestSubmit();
              }}
            >
              Yes, {WORDS[choice].toLowerCase()}
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </div>
      ) : (
        <button type="submit" className="primary" disabled={pending}>
          {pending ? "Recording…" : WORDS[choice]}
        </button>
      )}
    </form>
  );
}
