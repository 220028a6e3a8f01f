/**
 * Where a decoded value first holds U+0000 ("" for the value itself), or null. PostgreSQL's text
 * and jsonb cannot store that character, so input carrying it is refused at the edge, as a request
 * error, rather than failing later in a statement as ours.
 */
export function nulPathOf(value: unknown, at = ""): string | null {
  if (typeof value === "string") return value.includes("\u0000") ? at : null;
  if (typeof value !== "object" || value === null) return null;
  for (const [key, inner] of Object.entries(value)) {
    const here = at ? `${at}.${key}` : key;
    if (key.includes("\u0000")) return here;
    const found = nulPathOf(inner, here);
    if (found !== null) return found;
  }
  return null;
}
