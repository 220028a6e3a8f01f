/**
 * The types that keep staff reads apart from what decides (decision 017, lib/db/read-pool.ts):
 * here, without the pools, so the engine can name them without importing a database client.
 */
import type pg from "pg";

declare const replica: unique symbol;

/** A pool whose database may be a replica behind the primary by any lag. Staff reads only. */
export type ReadPool = Pick<pg.Pool, "query" | "end"> & { readonly [replica]: true };

/** What decides and writes accepts: anything but a ReadPool. */
export type PrimaryOnly = { readonly [replica]?: never };

/**
 * One snapshot that several staff reads share (lib/db/snapshot.ts): a read-only transaction on
 * one connection, of the primary or of a replica. Marked as a ReadPool is, so it is never handed
 * to anything that decides.
 */
export type StaffSnapshot = Pick<pg.PoolClient, "query"> & { readonly [replica]: true };

/**
 * What staff reads accept: the primary, a ReadPool, or a snapshot of either. A union, so a
 * ReadPool passed in stays one: handing it on to anything that decides does not compile.
 */
export type StaffReadable = (Pick<pg.Pool | pg.PoolClient, "query"> & PrimaryOnly) | ReadPool | StaffSnapshot;
