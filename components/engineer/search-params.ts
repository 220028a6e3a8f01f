/** Page searchParams (as Next passes them) to a flat record and a query string, first value of a repeated key. */
export type SearchParams = Record<string, string | string[] | undefined>;

export function flatParams(params: SearchParams): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [key, value] of Object.entries(params)) {
    // Next builds searchParams on a plain object, so `?toString=x` arrives as
    // [Object.prototype.toString, "x"]: only strings are values.
    const first = Array.isArray(value) ? value.find((item) => typeof item === "string") : value;
    if (typeof first === "string" && first !== "") flat[key] = first;
  }
  return flat;
}

export const queryString = (flat: Record<string, string>) => new URLSearchParams(flat).toString();
