/**
 * `fenceline`: define workflows and adapters in your own code.
 *
 * An adapter says what its destination can promise (idempotency keys, status queries, fencing
 * terms it checks itself, what a repeat may do) and how to call it; a workflow says what a
 * request of its kind takes as input, which steps it runs in which order, and what its end users
 * see. Workers (`fenceline/worker`) run them; your backend starts and reads requests through
 * `fenceline/client`. Nothing here touches a database or the network.
 *
 * @packageDocumentation
 * @module fenceline
 */
export { defineAdapter } from "@/lib/definitions/adapter";
export type {
  AdapterAnswer,
  AdapterCall,
  AdapterDefinition,
  AdapterOptions,
  AdapterPromises,
  AdapterStatusAnswer,
  AdapterStatusQuery,
  ReviewHint,
} from "@/lib/definitions/adapter";
export { httpAdapter } from "@/lib/definitions/http-adapter";
export type {
  HttpAdapterOptions,
  HttpAnswer,
  HttpClassification,
  HttpConclusion,
  HttpFailure,
  HttpIdentityPlacement,
  HttpRow,
  HttpStatusQuery,
} from "@/lib/definitions/http-adapter";
export { chooseAdapter, defineWorkflow } from "@/lib/definitions/workflow";
export type {
  AdapterChoice,
  FairShare,
  FairShareOptions,
  Fairness,
  Milestone,
  StepBasics,
  StepDefinition,
  StepOptions,
  TraceAttributes,
  WaitDefinition,
  WaitOutcome,
  WorkflowBuilder,
  WorkflowDefinition,
  WorkflowHeader,
  WorkflowInput,
  WorkflowOptions,
  WorkflowResults,
} from "@/lib/definitions/workflow";
export type { FencingTerm, StepContext, WaitContext } from "@/lib/definitions/context";
export type { WaitRequest } from "@/lib/engine/types";
export { STEP_STATES } from "@/lib/engine/vocabulary";
export type { StepState } from "@/lib/engine/vocabulary";
export { done, effect, noActionNeeded, skip } from "@/lib/definitions/outcome";
export { COMPENSATE_ON } from "@/lib/compensation/definition";
export type { CompensateOn, CompensateOptions, CompensationDefinition, LooseCompensateOptions, UndoMilestone, UndoSource } from "@/lib/compensation/definition";
export type { NotUndone } from "@/lib/compensation/types";
export type { CompensationState, CompensationView, UndoView } from "@/lib/compensation/types";
export type { EffectOutcome, NoActionOutcome, ObservedResponse, ResultOf, SkipOutcome, StepOutcome } from "@/lib/definitions/outcome";
export { instantOf } from "@/lib/timers/definition";
export { defineSchedule } from "@/lib/definitions/schedule";
export type { ScheduleDefinitionOptions, ScheduleOptions } from "@/lib/definitions/schedule";
export { CATCH_UP_POLICIES, OVERLAP_POLICIES } from "@/lib/schedules/definition";
export type { CatchUpPolicy, OverlapPolicy, ScheduleSpec } from "@/lib/schedules/definition";
export { DST_GAP_POLICIES } from "@/lib/schedules/times";
export type { DstGap } from "@/lib/schedules/times";
export type { TimerOptions, TimerResult, WallClockTime } from "@/lib/timers/definition";
export type { EventResult, EventTimeoutPolicy, EventWaitOptions, ReceivedEvent, TimedOutWait } from "@/lib/events/definition";
export { DEFAULT_MAX_CHILDREN, MAX_CHILDREN } from "@/lib/children/definition";
export type { ChildFailurePolicy, ChildInput, ChildOverrides, ChildrenOptions, ChildrenResult, ChildResults, CompletedChild, EndedChild } from "@/lib/children/definition";
export { DefinitionError } from "@/lib/definitions/errors";
export { ENGINE_WORDS } from "@/lib/definitions/words";
export { DefiniteFailure, DestinationCallError, RateLimited, StaleTermRejected, UnknownOutcome } from "@/lib/adapters/call-outcome";
export type { AdapterContract, AdapterRate, RepetitionPolicy } from "@/lib/adapters/contract";
