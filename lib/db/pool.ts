/**
 * Database handles for a process. `pool()` (node-postgres: the engine's named SQL and every
 * recorded write) and `prisma()` (the console's model reads) are created on first use from
 * DATABASE_URL, so importing this module needs no database: `next build` imports route modules
 * without one. Every connection they open has the engine's schema (lib/db/schema.mjs) as its
 * search_path. Which side each query belongs to: docs/decisions/011-prisma-for-models-sql-for-coordination.md.
 */
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { hostListClient, parseHostList } from "./host-list";
import { engineSchema, searchPathOption } from "./schema.mjs";

export interface PoolOptions {
  /** Shown in pg_stat_activity, so a connection can be traced to its process. */
  applicationName: string;
  /** Connections per pool. A web process holds two pools (pg and Prisma); a worker only uses pg. */
  max?: number;
  /**
   * The schema every connection searches: the engine's (FENCELINE_DB_SCHEMA) unless another is
   * named; null leaves the server's default, for databases that are not Fenceline's.
   */
  schema?: string | null;
  /**
   * Where work that needs a session of its own connects (LISTEN for wake-ups): a direct
   * connection string that bypasses a pooler in transaction mode (DATABASE_DIRECT_URL). Its pool
   * (sessionPoolOf) opens on first use and ends with this one. Unset: that work uses this pool.
   */
  sessionConnectionString?: string;
}

const DEFAULT_POOL_SIZE = 5;

/**
 * A node-postgres pool on `connectionString` (a single host, or a libpq host list); with
 * `sessionConnectionString` it also opens a direct pool for sessions, on first use (sessionPoolOf).
 */
export function createPool(
  connectionString: string,
  { applicationName, max = DEFAULT_POOL_SIZE, schema = engineSchema(), sessionConnectionString }: PoolOptions,
): pg.Pool {
  const created = new pg.Pool({ ...connectionConfig(connectionString, applicationName, schema), max, idleTimeoutMillis: 10_000 });
  // An idle connection can fail (server restart, terminated backend). Without a listener
  // node-postgres re-throws it and the process dies; the pool drops that client on its own.
  created.on("error", (error) => console.error(`[db] idle connection to ${applicationName} failed: ${error.message}`));
  // A checked-out connection can die too, between its holder's statements, and node-postgres
  // then emits 'error' on the client; with no listener that ends the process (a worker died so
  // in the connection-kill scenario). The holder learns of it from its next statement, which
  // fails, and the pool discards the connection when it comes back with that error.
  created.on("connect", (client) => client.on("error", () => undefined));
  if (sessionConnectionString) {
    let session: pg.Pool | undefined;
    // Held for good: the wake-up LISTEN and the token-revocation LISTEN; for a while: the lock
    // that lets one process follow a changed database identity.
    sessionPools.set(created, () => (session ??= createPool(sessionConnectionString, { applicationName: `${applicationName}:session`, max: 4, schema })));
    const end = created.end.bind(created);
    created.end = (async () => {
      await session?.end();
      await end();
    }) as typeof created.end;
  }
  return created;
}

/**
 * How every connection of a pool is made, the pg pools' and Prisma's alike. A host list (a
 * primary and its standbys): each connection finds the host to use (host-list.ts).
 */
function connectionConfig(connectionString: string, applicationName: string, schema: string | null): pg.PoolConfig {
  const hostList = parseHostList(connectionString);
  return {
    connectionString: hostList?.urls[0] ?? connectionString,
    ...(hostList ? { Client: hostListClient(hostList) } : {}),
    application_name: applicationName,
    connectionTimeoutMillis: 5_000,
    ...(schema === null ? {} : { options: searchPathOption(schema) }),
  };
}

const sessionPools = new WeakMap<pg.Pool, () => pg.Pool>();

/**
 * The pool for work that needs a session of its own (LISTEN, a session advisory lock): the direct
 * one `pool` was created with (`sessionConnectionString`), else `pool` itself. Decision 016 lists
 * what uses it.
 */
export function sessionPoolOf(pool: pg.Pool): pg.Pool {
  return sessionPools.get(pool)?.() ?? pool;
}

/**
 * DATABASE_DIRECT_URL: the same database reached without the pooler, for sessions (LISTEN) and
 * migrations; unset when there is no pooler in between.
 */
export function directDatabaseUrl(): string | undefined {
  return process.env.DATABASE_DIRECT_URL || undefined;
}

/** This process's name in pg_stat_activity: FENCELINE_PROCESS (set by the supervisor) or "fenceline". */
export function processName(): string {
  return process.env.FENCELINE_PROCESS ?? "fenceline";
}

export function databaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error("DATABASE_URL is not set (npm start sets it for the processes it runs)");
  return url;
}

// Kept on globalThis so `next dev` module reloads reuse one pool instead of leaking one per edit.
const handles = globalThis as typeof globalThis & { fencelinePool?: pg.Pool; fencelinePrisma?: PrismaClient };

export function pool(): pg.Pool {
  handles.fencelinePool ??= createPool(databaseUrl(), { applicationName: processName(), sessionConnectionString: directDatabaseUrl() });
  return handles.fencelinePool;
}

/**
 * A Prisma client for `connectionString`, in the engine's schema; it connects at its first query.
 * Its connections are made as createPool's are, so a host list with
 * target_session_attrs=read-write reaches the same primary.
 */
export function createPrisma(connectionString: string, { applicationName, max = DEFAULT_POOL_SIZE }: Omit<PoolOptions, "schema">): PrismaClient {
  const schema = engineSchema();
  return new PrismaClient({
    adapter: new PrismaPg(
      { ...connectionConfig(connectionString, applicationName, schema), max },
      // Prisma Client qualifies its own queries with this schema; the search_path covers raw SQL.
      { schema },
    ),
  });
}

export function prisma(): PrismaClient {
  handles.fencelinePrisma ??= createPrisma(databaseUrl(), { applicationName: `${processName()}:prisma` });
  return handles.fencelinePrisma;
}
