/**
 * The one interface through which a worker reaches the coordinator. Two transports implement
 * it: the direct database transport (direct-coordinator.ts, the same engine functions, for one
 * box and benchmarks) and the HTTP worker protocol (http-coordinator.ts, workers on other
 * machines). Types only, so the worker door does not bring the engine's SQL or pg along.
 */
import type { Registration } from "@/lib/definitions/registration";
import type {
  ArmedWait,
  CheckpointAck,
  ClaimedStep,
  LateObservation,
  LeaseHandle,
  Permit,
  PermitRefusal,
  PermitRequest,
  ReceiptRequest,
  ReceiptResult,
  ReleaseOptions,
  RenewRequest,
  RenewResult,
  WaitRequest,
  WorkflowVersion,
} from "@/lib/engine/types";

export type Coordinator = {
  readonly transport: "direct" | "http";
  /**
   * Registers a session with the definitions it serves (refused, with the difference named, when
   * a kind and version is already registered with another shape).
   */
  registerSession(registration: Registration): Promise<{ sessionId: string; served: WorkflowVersion[] }>;
  heartbeat(sessionId: string): Promise<boolean>;
  stopSession(sessionId: string, reason: string): Promise<void>;
  /** Claims up to `limit` ready steps of the workflow versions the session registered to serve. */
  claim(sessionId: string, served: readonly WorkflowVersion[], limit: number): Promise<ClaimedStep[]>;
  /**
   * A claim that waits: claims up to `limit` ready steps; when none is ready, waits up to
   * `waitMs` for work and claims again (over HTTP, one long poll that returns the work). The
   * direct transport waits first when the session's last claim took fewer than it asked for and
   * no step has been announced ready since it began. Aborting `signal` (the worker stopping) ends
   * the wait at once, and nothing more is claimed.
   */
  claimOrWait(sessionId: string, served: readonly WorkflowVersion[], limit: number, waitMs: number, signal?: AbortSignal): Promise<ClaimedStep[]>;
  renew(sessionId: string, requests: readonly RenewRequest[]): Promise<RenewResult[]>;
  persistRequestIdentity(lease: LeaseHandle, proposed: string, adapterVersion: string): Promise<CheckpointAck & { requestIdentity: string }>;
  beginInvocation(lease: LeaseHandle): Promise<CheckpointAck>;
  observeResponse(lease: LeaseHandle, externalReference: string | null, result: unknown): Promise<CheckpointAck>;
  observeEffectAbsent(lease: LeaseHandle, answer: unknown): Promise<CheckpointAck>;
  /** A permit, or how long to wait for capacity; AuthorityLostError when the lease no longer holds authority. */
  acquirePermit(lease: LeaseHandle, request: PermitRequest): Promise<Permit | PermitRefusal>;
  releasePermit(permitId: string): Promise<void>;
  holdPermit(permitId: string, reason: string, holdMs: number): Promise<void>;
  commitReceipts(sessionId: string, requests: readonly ReceiptRequest[]): Promise<ReceiptResult[]>;
  /**
   * Commits the receipts (each fenced on its own lease, as commitReceipts), then claims up to
   * `claimLimit` ready steps for the slots they free: over HTTP one exchange instead of two.
   */
  commitAndClaim(
    sessionId: string,
    served: readonly WorkflowVersion[],
    requests: readonly ReceiptRequest[],
    claimLimit: number,
  ): Promise<{ results: ReceiptResult[]; claimed: ClaimedStep[] }>;
  reportFailure(lease: LeaseHandle, reason: string): Promise<void>;
  release(lease: LeaseHandle, reason: string, options?: ReleaseOptions): Promise<void>;
  postLateObservation(lease: LeaseHandle, observation: LateObservation): Promise<void>;
  /**
   * A wait step (a timer, an event wait) gives up its lease and waits: its wait is armed in its
   * room in the same transaction. AuthorityLostError when the lease no longer holds authority,
   * InvalidWaitError when the room cannot take the request.
   */
  park(lease: LeaseHandle, wait: WaitRequest, reason: string): Promise<ArmedWait>;
  /**
   * Settles up to `limit` of what the database clock has made due (timers that fire, waits that
   * time out); when nothing is due, waits up to `waitMs` for the next due time or for a wait armed
   * through this coordinator, and tries again (over HTTP, one long poll). Returns how many it
   * settled. Aborting `signal` ends the wait at once.
   */
  settleDue(limit: number, waitMs: number, signal?: AbortSignal): Promise<number>;
  /** One bounded recovery pass (expired leases, adapter permits, steps queued behind their concurrency key); returns how many it settled. */
  recover(decidedBy: string, batchSize: number): Promise<number>;
  /** Resolves when work may have become ready, or after `timeoutMs`, whichever is first. */
  waitForWork(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
};
