/**
 * The cluster shape of `npm start` on one machine (docs/decisions/016-several-web-replicas-and-a-pooler.md):
 * FENCELINE_WEB_REPLICAS web processes behind haproxy (Debian's `haproxy`, round robin, health
 * checked, naming the replica that answered in `x-fenceline-replica`; a request with that header goes to the
 * replica it names), and with FENCELINE_POOLER=pgbouncer a PgBouncer (Debian's `pgbouncer`) in transaction
 * mode between every process and PostgreSQL. This module writes their configuration into a
 * directory of its own and says how to run them in the foreground, so the supervisor stops them
 * with everything else.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import type pg from "pg";
import { engineSchema } from "@/lib/db/schema.mjs";
import { SettingError } from "@/lib/env";
import type { ChildSpec } from "./supervisor";

export const HAPROXY = "/usr/sbin/haproxy";
export const PGBOUNCER = "/usr/sbin/pgbouncer";

/** A directory for the generated configuration, readable by the pooler's user; removed by `remove`. */
export function configDirectory(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), "fenceline-cluster-"));
  chmodSync(dir, 0o755);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * haproxy in front of the replicas: HTTP, round robin, each replica checked on /api/health so a
 * stopped one is taken out. The timeouts outlast the worker protocol's long poll.
 */
export function haproxyChild(
  dir: string,
  { port, replicaPorts, healthPath = "/api/health" }: { port: number; replicaPorts: readonly number[]; /** null: a TCP check only. */ healthPath?: string | null },
): ChildSpec {
  const file = path.join(dir, "haproxy.cfg");
  writeFileSync(
    file,
    [
      "global",
      "  maxconn 2000",
      "defaults",
      "  mode http",
      "  option forwardfor",
      "  timeout connect 5s",
      "  timeout client 120s",
      "  timeout server 120s",
      "  timeout http-keep-alive 10s",
      "frontend fenceline",
      `  bind 127.0.0.1:${port}`,
      "  default_backend replicas",
      "backend replicas",
      "  balance roundrobin",
      ...(healthPath ? [`  option httpchk GET ${healthPath}`] : []),
      // Which replica answered, for whoever debugs a cluster (and the test that alternates them).
      "  http-response set-header x-fenceline-replica %s",
      // A request may name its replica in the same header (tests, debugging one replica).
      ...replicaPorts.map((_, index) => `  use-server web-${index + 1} if { req.hdr(x-fenceline-replica) -m str web-${index + 1} }`),
      ...replicaPorts.map((replicaPort, index) => `  server web-${index + 1} 127.0.0.1:${replicaPort} check inter 2s fall 2 rise 1`),
      "",
    ].join("\n"),
  );
  // -db: stay in the foreground, log to stderr.
  return { name: "haproxy", command: HAPROXY, args: ["-db", "-f", file], stopWave: 2 };
}

/**
 * PgBouncer in transaction mode in front of the database of `directUrl`. It authenticates
 * clients against the URL's own user and password and logs in to PostgreSQL with them. It ignores
 * the `options` startup parameter (the search_path every Fenceline connection sends), so
 * `pinSearchPath` must have put the schema on the role. Run as `postgres` when started as root:
 * PgBouncer refuses to run as root.
 */
export function pgbouncerChild(dir: string, { directUrl, port, poolSize }: { directUrl: string; port: number; poolSize: number }): ChildSpec {
  const target = new URL(directUrl);
  const user = decodeURIComponent(target.username || "postgres");
  const password = decodeURIComponent(target.password);
  const quote = (value: string) => `"${value.replaceAll('"', '""')}"`;
  const authFile = path.join(dir, "userlist.txt");
  writeFileSync(authFile, `${quote(user)} ${quote(password)}\n`, { mode: 0o644 });
  const file = path.join(dir, "pgbouncer.ini");
  writeFileSync(
    file,
    [
      "[databases]",
      `* = host=${target.hostname} port=${target.port || "5432"}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      // Without a password in the URL, PostgreSQL trusts this user; so does PgBouncer.
      `auth_type = ${password ? "plain" : "trust"}`,
      `auth_file = ${authFile}`,
      "pool_mode = transaction",
      `default_pool_size = ${poolSize}`,
      "max_client_conn = 1000",
      "ignore_startup_parameters = extra_float_digits,options",
      // A line per connection would drown the other processes' output.
      "log_connections = 0",
      "log_disconnections = 0",
      "log_stats = 0",
      "",
    ].join("\n"),
    { mode: 0o644 },
  );
  return { name: "pgbouncer", command: PGBOUNCER, args: [...(userInfo().uid === 0 ? ["-u", "postgres"] : []), file], stopWave: 3 };
}

/** The same database through the pooler on `port`: what every process gets as DATABASE_URL. */
export function pooledUrl(directUrl: string, port: number): string {
  const pooled = new URL(directUrl);
  pooled.hostname = "127.0.0.1";
  pooled.port = String(port);
  return pooled.toString();
}

/**
 * Puts the engine's schema on the role in this database: behind PgBouncer in transaction mode a
 * connection's startup `options` are ignored and SET does not last, so server connections must
 * get the search_path from the role (decision 008).
 */
export async function pinSearchPath(db: pg.Pool, directUrl: string): Promise<void> {
  const url = new URL(directUrl);
  const database = decodeURIComponent(url.pathname.slice(1));
  const user = decodeURIComponent(url.username || "postgres");
  const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;
  await db.query(`ALTER ROLE ${ident(user)} IN DATABASE ${ident(database)} SET search_path = ${engineSchema()}`);
}

/** FENCELINE_POOLER: "none" (default) or "pgbouncer". */
export function poolerSetting(): "none" | "pgbouncer" {
  const setting = process.env.FENCELINE_POOLER || "none";
  if (setting !== "none" && setting !== "pgbouncer") throw new SettingError(`FENCELINE_POOLER must be "none" or "pgbouncer", got "${setting}"`);
  return setting;
}
