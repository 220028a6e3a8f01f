-- Trace context (issue 33, docs/decisions/025-one-trace-per-request.md): a request keeps the W3C
-- `traceparent` of the span that created it, so the spans of its steps, written later by other
-- processes (workers, a recovering worker after a crash), are children of that span: one trace
-- from the app's call to the destination, surviving every process in between.
--
-- Only the traceparent is kept (version 00: 55 characters, lower-case hex), never `tracestate`
-- nor baggage: those may carry an app's own data, and a request row outlives any trace backend's
-- retention. NULL when the request was created outside a sampled or propagated trace.

ALTER TABLE "workflow"
  ADD COLUMN "trace_parent" TEXT,
  ADD CONSTRAINT "workflow_trace_parent_format"
    CHECK ("trace_parent" ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');
