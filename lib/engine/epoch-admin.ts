/**
 * The fenced destinations an epoch transition installs a new epoch at: every registered adapter
 * that enforces fencing terms and names an epoch administration URL, reached over the epoch
 * administration protocol:
 *
 *   GET  <url>         → { installed, highestSeen }            (epochs as decimal strings)
 *   PUT  <url>         { epoch } → { installed, highestSeen }
 *   POST <url>/probe   { epoch } → { rejected }   a write under the epoch before `epoch` with the
 *                                                 largest term, attempted for real: true when refused
 */
import { run, type NamedSql, type Queryable } from "./db";
import type { EpochDestination } from "./epoch";

const ADMIN_TIMEOUT_MS = 5_000;

/** The latest version of each fenced adapter with an epoch administration URL. */
const fencedWithEpochAdmin: NamedSql = {
  name: "fl_fenced_with_epoch_admin",
  text: `
SELECT DISTINCT ON (name) name, epoch_admin_url
FROM adapter_definition
WHERE fence_enforcement AND epoch_admin_url IS NOT NULL
ORDER BY name, registered_at DESC`,
};

const epochOf = (value: unknown, what: string): bigint => {
  if (typeof value !== "string" || !/^\d{1,19}$/.test(value)) throw new Error(`epoch administration answered no ${what}`);
  return BigInt(value);
};

async function exchange(url: string, init: RequestInit): Promise<Record<string, unknown>> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS) });
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${init.method ?? "GET"} ${url} answered ${response.status}: ${String(body.detail ?? "no detail")}`);
  return body;
}

/** One fenced destination, administered over HTTP at `url`. */
export function httpEpochDestination(adapter: string, url: string): EpochDestination {
  const state = async (init: RequestInit) => {
    const body = await exchange(url, init);
    return { installed: epochOf(body.installed, "installed epoch"), highestSeen: epochOf(body.highestSeen, "highest epoch seen") };
  };
  const json = (body: unknown): RequestInit => ({ headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return {
    adapter,
    state: () => state({ method: "GET" }),
    install: (epoch) => state({ method: "PUT", ...json({ epoch: epoch.toString() }) }),
    probeRejectsOlderThan: async (epoch) => {
      const body = await exchange(`${url}/probe`, { method: "POST", ...json({ epoch: epoch.toString() }) });
      if (typeof body.rejected !== "boolean") throw new Error(`POST ${url}/probe answered no verdict`);
      return body.rejected;
    },
  };
}

export async function registeredEpochDestinations(db: Queryable): Promise<EpochDestination[]> {
  const rows = await run<{ name: string; epoch_admin_url: string }>(db, fencedWithEpochAdmin, []);
  return rows.map((row) => httpEpochDestination(row.name, row.epoch_admin_url));
}
