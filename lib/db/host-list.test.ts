/**
 * Parsing of libpq-style host lists (host-list.ts). Connecting through one — the read-write host
 * found after a real promotion — is lib/scenarios/failover.scenario.test.ts.
 */
import { expect, test } from "vitest";
import { parseHostList } from "./host-list";

test("an ordinary connection string is not a host list", () => {
  expect(parseHostList("postgresql://u:p@db:5432/fenceline?sslmode=disable")).toBeNull();
});

test("a host list becomes one single-host URL per host, in order, without target_session_attrs", () => {
  expect(parseHostList("postgresql://u:p%40ss@db-a:5432,db-b:6432/fenceline?sslmode=disable&target_session_attrs=read-write")).toEqual({
    urls: ["postgresql://u:p%40ss@db-a:5432/fenceline?sslmode=disable", "postgresql://u:p%40ss@db-b:6432/fenceline?sslmode=disable"],
    readWrite: true,
  });
  expect(parseHostList("postgres://db-a,db-b/x")).toEqual({ urls: ["postgres://db-a/x", "postgres://db-b/x"], readWrite: false });
  expect(parseHostList("postgres://db-a,db-b/x?target_session_attrs=primary")?.readWrite).toBe(true);
});

test("a target_session_attrs it cannot honour is refused, not ignored", () => {
  expect(() => parseHostList("postgres://db-a,db-b/x?target_session_attrs=standby")).toThrow(/not supported/);
});
