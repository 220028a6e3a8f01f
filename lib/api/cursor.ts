/**
 * Keyset pagination cursors: the sort key of the last row of a page, as opaque base64url JSON.
 * A cursor that does not decode to the expected key shape is a 400, never a query.
 */
import { z } from "zod";
import { nulPathOf } from "./nul";

export function encodeCursor(key: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(key)).toString("base64url");
}

/** A query-string field holding a cursor whose decoded key must match `key`. */
export function cursorField<K extends z.ZodType<readonly unknown[]>>(key: K) {
  return z
    .string()
    .max(512, "cursor is too long")
    .transform((raw, context): z.output<K> => {
      let decoded: unknown;
      try {
        decoded = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
      } catch {
        decoded = undefined;
      }
      const parsed = key.safeParse(decoded);
      if (parsed.success && nulPathOf(parsed.data) === null) return parsed.data;
      context.addIssue({ code: "custom", message: "cursor is not one this API issued" });
      return z.NEVER;
    })
    .meta({ description: "Opaque cursor from the previous page's nextCursor", override: { type: "string" } });
}

/** Page size: 1..200, default 50. */
export const limitField = z.coerce.number().int().min(1).max(200).default(50);

export type Page<T> = { readonly items: readonly T[]; readonly nextCursor: string | null };

export const pageSchema = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), nextCursor: z.string().nullable() });
