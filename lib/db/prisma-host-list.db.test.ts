/**
 * Prisma's connections follow a libpq host list as the pg pools' do (createPrisma, host-list.ts):
 * an unreachable first host is passed over, and with target_session_attrs=read-write so is a
 * read-only one. A standby is not needed for the read-only case: a role whose sessions default to
 * read-only transactions answers the same probe the same way.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { expect, inject, onTestFinished } from "vitest";
import { freePort } from "@/lib/net/free-port";
import { createPrisma } from "./pool";
import { dbTest as test } from "./test-database";
import { withAdmin } from "./test-template";

/** `url` with the host list `hosts` (host:port each) and target_session_attrs=`attrs` in place of its host. */
function hostListOf(url: string, hosts: readonly string[], attrs: "read-write" | "any", login?: { user: string; password: string }): string {
  const parsed = new URL(url);
  if (login) {
    parsed.username = login.user;
    parsed.password = login.password;
  }
  parsed.searchParams.set("target_session_attrs", attrs);
  return parsed.toString().replace(parsed.host, hosts.join(","));
}

const hostOf = (url: string) => new URL(url).host;

test("an unreachable first host is passed over: Prisma reads and writes on the next, the one that takes writes", async ({ db }) => {
  const closed = `127.0.0.1:${await freePort()}`;
  const prisma = createPrisma(hostListOf(db.url, [closed, hostOf(db.url)], "read-write"), { applicationName: "prisma-host-list" });
  onTestFinished(() => prisma.$disconnect());
  const [server] = await prisma.$queryRaw<{ port: number; read_only: string }[]>`SELECT inet_server_port() AS port, current_setting('transaction_read_only') AS read_only`;
  expect(server).toEqual({ port: Number(new URL(db.url).port || 5432), read_only: "off" });
  // A model write and read in the engine's schema.
  const name = `prisma-${randomBytes(3).toString("hex")}`;
  await prisma.workerToken.create({ data: { workerName: name, tokenSha256: randomBytes(32).toString("hex"), createdBy: "test" } });
  expect(await prisma.workerToken.count({ where: { workerName: name } })).toBe(1);
});

test("with target_session_attrs=read-write a read-only host is passed over, and a list of no writable host is refused rather than used", async ({ db }) => {
  const role = `fenceline_read_only_${randomBytes(3).toString("hex")}`;
  const login = { user: role, password: randomBytes(12).toString("hex") };
  const serverUrl = inject("databaseServerUrl");
  await withAdmin(serverUrl, async (admin) => {
    await admin.query(`CREATE ROLE ${pg.escapeIdentifier(role)} LOGIN PASSWORD ${pg.escapeLiteral(login.password)}`);
    await admin.query(`ALTER ROLE ${pg.escapeIdentifier(role)} SET default_transaction_read_only = on`);
  });
  onTestFinished(async () => {
    await withAdmin(serverUrl, (admin) => admin.query(`DROP ROLE IF EXISTS ${pg.escapeIdentifier(role)}`));
  });
  const hosts = [hostOf(db.url), `127.0.0.1:${await freePort()}`];

  const writable = createPrisma(hostListOf(db.url, hosts, "read-write", login), { applicationName: "prisma-host-list-rw" });
  onTestFinished(() => writable.$disconnect());
  await expect(writable.$queryRaw`SELECT 1`).rejects.toThrow(/no read-write host among 2 answered \(.*:\d+ is read-only; 127\.0\.0\.1:\d+: .*ECONNREFUSED/);

  // The same list without the attribute takes the first host that answers: the read-only one.
  const any = createPrisma(hostListOf(db.url, hosts, "any", login), { applicationName: "prisma-host-list-any" });
  onTestFinished(() => any.$disconnect());
  const [session] = await any.$queryRaw<{ read_only: string }[]>`SELECT current_setting('transaction_read_only') AS read_only`;
  expect(session).toEqual({ read_only: "on" });
});
