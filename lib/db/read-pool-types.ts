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
 * What staff reads accept: the primary, or a ReadPool. A union, so a ReadPool passed in stays
 * one: handing it on to anything that decides does not compile.
 */
export type StaffReadable = (Pick<pg.Pool | pg.PoolClient, "query"> & PrimaryOnly) | ReadPool;
