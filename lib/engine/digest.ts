import { createHash } from "node:crypto";

/** JSON with object keys sorted, so equal values always serialise to the same text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}

/** A digest of a value, kept as evidence instead of the value itself. */
export function digestOf(value: unknown): string {
  return "sha256:" + createHash("sha256").update(canonicalJson(value ?? null)).digest("hex");
}
