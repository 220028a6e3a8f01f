/**
 * Connection strings that list several hosts, as libpq reads them:
 *
 *   postgresql://fenceline@db-a:5432,db-b:5432/fenceline?target_session_attrs=read-write
 *
 * node-postgres connects to one host and knows no target_session_attrs, so a pool made from such
 * a string (createPool, and createPrisma's pool) connects each new connection to the first host, in the order given, that
 * answers and — with `read-write` or `primary` — is not in recovery and not read-only. After a
 * failover the processes find the promoted standby this way without being told: their connections
 * to the dead primary fail, and the pool's next connections land on the new primary.
 */
import pg from "pg";

const URL_PATTERN = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)(.*)$/;

export type HostList = {
  /** One single-host connection string per listed host, in order, without target_session_attrs. */
  readonly urls: readonly string[];
  /** target_session_attrs=read-write (or primary): skip hosts in recovery or read-only. */
  readonly readWrite: boolean;
};

/** The hosts of a connection string that lists more than one; null for an ordinary one. */
export function parseHostList(connectionString: string): HostList | null {
  const match = URL_PATTERN.exec(connectionString);
  if (!match || !match[3]!.includes(",")) return null;
  const [, scheme, userinfo = "", hostPart, rest] = match as unknown as [string, string, string | undefined, string, string];
  const queryAt = rest.indexOf("?");
  const path = queryAt < 0 ? rest : rest.slice(0, queryAt);
  const params = new URLSearchParams(queryAt < 0 ? "" : rest.slice(queryAt + 1));
  const attrs = params.get("target_session_attrs") ?? "any";
  if (!["any", "read-write", "primary"].includes(attrs)) throw new Error(`target_session_attrs=${attrs} is not supported (any, read-write, primary)`);
  params.delete("target_session_attrs");
  const query = params.size > 0 ? `?${params.toString()}` : "";
  const urls = hostPart.split(",").map((host) => `${scheme}${userinfo}${host}${path}${query}`);
  return { urls, readWrite: attrs !== "any" };
}

/** Whether a database URL may be parsed with `new URL` (a host list may not). */
export const isHostList = (connectionString: string): boolean => parseHostList(connectionString) !== null;

const PROBE_TIMEOUT_MS = 2_000;

/** The first host of the list that answers and, if asked, takes writes. */
async function findHost(list: HostList, preferred: number): Promise<{ index: number; host: string; port: number }> {
  const order = [...list.urls.keys()].sort((a, b) => (a === preferred ? -1 : b === preferred ? 1 : a - b));
  const problems: string[] = [];
  for (const index of order) {
    const probe = new pg.Client({ connectionString: list.urls[index], connectionTimeoutMillis: PROBE_TIMEOUT_MS });
    probe.on("error", () => undefined);
    try {
      await probe.connect();
      if (list.readWrite) {
        const { rows } = await probe.query<{ read_only: boolean }>("SELECT pg_is_in_recovery() OR current_setting('transaction_read_only')::boolean AS read_only");
        if (rows[0]!.read_only) {
          problems.push(`${probe.host}:${probe.port} is read-only`);
          continue;
        }
      }
      return { index, host: probe.host, port: probe.port };
    } catch (error) {
      problems.push(`${probe.host}:${probe.port}: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      await probe.end().catch(() => undefined);
    }
  }
  throw new Error(`no ${list.readWrite ? "read-write " : ""}host among ${list.urls.length} answered (${problems.join("; ")})`);
}

type ConnectableClient = pg.Client & { host: string; port: number; connectionParameters: { host: string; port: number }; _connect(callback: (error?: Error) => void): void };

/**
 * A pg.Client class for pg.Pool's `Client` option: each connection first finds its host (the one
 * that answered last is tried first), then connects there with the pool's settings.
 */
export function hostListClient(list: HostList): typeof pg.Client {
  let last = 0;
  const Base = pg.Client as unknown as new (config?: pg.ClientConfig) => ConnectableClient;
  class HostListClient extends Base {
    override _connect(callback: (error?: Error) => void): void {
      findHost(list, last).then(
        ({ index, host, port }) => {
          last = index;
          this.host = this.connectionParameters.host = host;
          this.port = this.connectionParameters.port = port;
          super._connect(callback);
        },
        (error: Error) => callback(error),
      );
    }
  }
  return HostListClient as unknown as typeof pg.Client;
}
