import { FencelineError } from "@/lib/engine/errors";

/** A metrics range that is empty, reversed, longer than allowed, or has too many buckets. */
export class InvalidMetricsRangeError extends FencelineError {
  readonly code = "invalid_metrics_range";
}
