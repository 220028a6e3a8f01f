/**
 * `fenceline/react`: your end users' progress on your own pages. `useRequestProgress` polls a
 * request's tracking view (on @tanstack/react-query) until it ends; `<RequestProgress>` renders
 * it as Fenceline's own tracking page does, themed by your CSS variables.
 *
 * It reads `GET /api/track/<token>` across origins: list your page's origin in Fenceline's
 * FENCELINE_TRACK_ORIGINS. It needs `react` and `@tanstack/react-query` (optional peers of the
 * package) and imports nothing of the worker, the engine or a server.
 *
 * @packageDocumentation
 * @module fenceline/react
 */
export { RequestProgress } from "@/lib/react/request-progress";
export type { RequestProgressProps } from "@/lib/react/request-progress";
export { TrackingNotFoundError, useRequestProgress } from "@/lib/react/use-request-progress";
export type { RequestProgressOptions } from "@/lib/react/use-request-progress";
export type { Milestone as ProgressMilestone, TrackingView } from "@/lib/projection/types";
