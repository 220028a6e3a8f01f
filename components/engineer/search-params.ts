/** Page searchParams (as Next passes them) to a flat record and a query string, first value of a repeated key. */
export type SearchParams = Record<string, string | string[] | undefined>;

export function flatParams(params: SearchParams): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [key, value] of Object.entries(params)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined && first !== "") flat[key] = first;
  }
  return flat;
}

export const queryString = (flat: Record<string, string>) => new URLSearchParams(flat).toString();
