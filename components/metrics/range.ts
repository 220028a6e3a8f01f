/** The metrics page's time range, as it lives in the URL: a preset relative to now, or a fixed from/to with a bucket. */
import type { MetricBucket } from "@/lib/api/contract/engineer/metrics";

export const RANGE_PRESETS = [
  { id: "15m", label: "15 min", ms: 15 * 60_000, bucket: "1m" },
  { id: "1h", label: "1 hour", ms: 60 * 60_000, bucket: "1m" },
  { id: "6h", label: "6 hours", ms: 6 * 60 * 60_000, bucket: "5m" },
  { id: "24h", label: "24 hours", ms: 24 * 60 * 60_000, bucket: "15m" },
  { id: "7d", label: "7 days", ms: 7 * 24 * 60 * 60_000, bucket: "1h" },
] as const satisfies readonly { id: string; label: string; ms: number; bucket: MetricBucket }[];

export type RangeSelection =
  | { kind: "preset"; preset: (typeof RANGE_PRESETS)[number]["id"] }
  | { kind: "fixed"; from: string; to: string; bucket: string };

export function selectionFrom(params: Record<string, string>): RangeSelection {
  if (params.from || params.to) return { kind: "fixed", from: params.from ?? "", to: params.to ?? "", bucket: params.bucket ?? "1m" };
  const preset = RANGE_PRESETS.find((p) => p.id === params.range) ?? RANGE_PRESETS[1];
  return { kind: "preset", preset: preset.id };
}

/** The API query for a selection, with a preset resolved against the clock now. */
export function rangeQuery(selection: RangeSelection, now = Date.now()): string {
  if (selection.kind === "fixed") {
    const query = new URLSearchParams({ bucket: selection.bucket });
    if (selection.from) query.set("from", selection.from);
    if (selection.to) query.set("to", selection.to);
    return query.toString();
  }
  const preset = RANGE_PRESETS.find((p) => p.id === selection.preset)!;
  return new URLSearchParams({ from: new Date(now - preset.ms).toISOString(), to: new Date(now).toISOString(), bucket: preset.bucket }).toString();
}
