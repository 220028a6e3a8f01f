/**
 * The relay: delivers outbox events to webhook endpoints. Each tick it
 *   1. prepares committed events: freezes each one's body (the request's end-user projection as
 *      it is now, a few milliseconds after the change) and creates one pending delivery per
 *      subscribed endpoint — one transaction, events locked with SKIP LOCKED;
 *   2. claims due deliveries under a lease on the database clock (sql.claimDeliveries) and sends
 *      each, signed, with the event id as `webhook-id`, the receiver's idempotency key;
 *   3. concludes each under the term it claimed: a 2xx is the receipt; a 4xx other than 408/429
 *      fails it; 408, 429 (after Retry-After), 5xx, timeouts and refused connections retry after
 *      an exponential backoff with jitter, until the retry window has passed: then dead-lettered.
 * A relay killed between claim and conclusion leaves its lease to expire; the next relay to claim
 * sends again under a newer term, so a receiver may see an event twice and drops it by id.
 */
import { readCompensations } from "@/lib/compensation/read";
import type { Pool } from "pg";
import { inTransaction, run } from "@/lib/engine/db";
import { trackingViewByWorkflowId } from "@/lib/projection/read";
import { webhookBody, type WebhookBody, type WebhookEventType } from "./events";
import { webhookHeaders } from "./signature";
import * as sql from "./sql";

export type RelaySettings = {
  /** Bound on one send. */
  readonly timeoutMs: number;
  /** First retry delay; each retry doubles it, up to backoffMaxMs, then scaled by a jitter in [0.5, 1). */
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  /** How long a delivery keeps being retried before it is dead-lettered. */
  readonly retryWindowMs: number;
  /** Deliveries sent at once by one relay. */
  readonly concurrency: number;
  /** Wait between ticks when there was nothing to do. */
  readonly intervalMs: number;
};

export const DEFAULT_RELAY_SETTINGS: RelaySettings = {
  timeoutMs: 10_000,
  backoffBaseMs: 5_000,
  backoffMaxMs: 3_600_000,
  retryWindowMs: 86_400_000,
  concurrency: 10,
  intervalMs: 250,
};

const PREPARE_BATCH = 100;
/** A send's lease outlasts its timeout (by up to 5 s), so a live relay concludes before anyone takes over. */
const leaseMsFor = (timeoutMs: number) => timeoutMs + Math.min(5_000, timeoutMs);

type UnpreparedRow = { id: string; type: WebhookEventType; workflow_id: string; detail: { resolution?: string } | null; created_at: Date; kind: string };
type ClaimedRow = { id: string; lease_term: string; event_id: string; attempts: number; body: WebhookBody; url: string; secret: string };

export type SendResult = { readonly state: "delivered" | "failed" | "pending"; readonly status: number | null; readonly error: string | null; readonly retryAfterMs: number | null; readonly latencyMs: number };

/** What an answer means for the delivery (issue: 2xx receipt; 4xx final except 408/429; the rest retried). */
export function classifyAnswer(status: number): SendResult["state"] {
  if (status >= 200 && status < 300) return "delivered";
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return "failed";
  return "pending";
}

/** Retry-After in ms: delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(value: string | null, nowMs = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** The delay before retry number `attempts` (1 = the first retry): exponential, capped, jittered. */
export function backoffMs(attempts: number, settings: Pick<RelaySettings, "backoffBaseMs" | "backoffMaxMs">, random = Math.random): number {
  const exponential = Math.min(settings.backoffMaxMs, settings.backoffBaseMs * 2 ** Math.min(30, Math.max(0, attempts - 1)));
  return Math.round(exponential * (0.5 + random() / 2));
}

export class Relay {
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  readonly settings: RelaySettings;

  constructor(
    private readonly pool: Pool,
    /** This relay's name in leases and attempts: unique per process start. */
    readonly name: string,
    settings: Partial<RelaySettings> = {},
  ) {
    this.settings = { ...DEFAULT_RELAY_SETTINGS, ...settings };
  }

  /** Freezes bodies of committed events and fans them out to subscribed endpoints. Answers how many events. */
  async prepare(): Promise<number> {
    return inTransaction(this.pool, async (client) => {
      const events = await run<UnpreparedRow>(client, sql.lockUnprepared, [PREPARE_BATCH]);
      if (events.length === 0) return 0;
      const bodies: string[] = [];
      const undoing = await readCompensations(client, [...new Set(events.map((event) => event.workflow_id))]);
      for (const event of events) {
        const progress = await trackingViewByWorkflowId(client, event.workflow_id);
        const compensation = undoing.get(event.workflow_id) ?? null;
        bodies.push(JSON.stringify(webhookBody({ type: event.type, createdAt: event.created_at, workflowId: event.workflow_id, kind: event.kind, detail: event.detail }, progress, compensation)));
      }
      await run(client, sql.prepareEvents, [events.map((event) => event.id), bodies]);
      return events.length;
    });
  }

  /** Claims up to `limit` due deliveries and sends them; answers how many were sent. */
  async deliverDue(limit = this.settings.concurrency): Promise<number> {
    const claimed = await run<ClaimedRow>(this.pool, sql.claimDeliveries, [this.name, leaseMsFor(this.settings.timeoutMs), limit]);
    await Promise.all(claimed.map((delivery) => this.deliver(delivery)));
    return claimed.length;
  }

  private async deliver(delivery: ClaimedRow): Promise<void> {
    const result = await this.send(delivery);
    const delayMs = result.state === "pending" ? (result.retryAfterMs ?? backoffMs(delivery.attempts, this.settings)) : 0;
    await run(this.pool, sql.concludeDelivery, [
      delivery.id, delivery.lease_term, this.name, result.state, result.status, result.error,
      Math.min(delayMs, this.settings.retryWindowMs), result.latencyMs, this.settings.retryWindowMs,
    ]);
  }

  private async send(delivery: ClaimedRow): Promise<SendResult> {
    const body = JSON.stringify(delivery.body);
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    try {
      const response = await fetch(delivery.url, {
        method: "POST",
        headers: webhookHeaders(delivery.secret, delivery.event_id, body),
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
      await response.body?.cancel();
      const state = classifyAnswer(response.status);
      const wait = response.status === 429 || response.status === 408 || response.status === 503 ? retryAfterMs(response.headers.get("retry-after")) : null;
      return { state, status: response.status, error: state === "delivered" ? null : `HTTP ${response.status}`, retryAfterMs: wait, latencyMs: latency() };
    } catch (error) {
      const timedOut = error instanceof DOMException && error.name === "TimeoutError";
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      return { state: "pending", status: null, error: timedOut ? `no answer within ${this.settings.timeoutMs} ms` : (cause ?? String(error)), retryAfterMs: null, latencyMs: latency() };
    }
  }

  /** One pass: prepare, then deliver what is due. Answers whether there was anything to do. */
  async tick(): Promise<boolean> {
    const prepared = await this.prepare();
    const sent = await this.deliverDue();
    return prepared > 0 || sent > 0;
  }

  start(onError: (error: unknown) => void = (error) => process.stderr.write(`[relay] ${String(error)}\n`)): void {
    if (this.running) return;
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        const busy = await this.tick().catch((error: unknown) => {
          onError(error);
          return false;
        });
        if (!busy && this.running) await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.settings.intervalMs);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    })();
  }

  /** Stops after the sends under way conclude. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }
}
