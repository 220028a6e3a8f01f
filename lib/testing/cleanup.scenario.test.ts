/**
 * A test environment leaves nothing behind: after close, its database is gone, the embedded
 * PostgreSQL it started has stopped (no server process, nothing listening, no data directory),
 * and with DATABASE_URL only the environment's own database was created and dropped.
 */
import { readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import net from "node:net";
import pg from "pg";
import { expect, inject, test } from "vitest";
import { z } from "zod";
import { defineWorkflow, done } from "@/lib/sdk";
import { createTestEnvironment } from "@/lib/sdk/testing";

const hello = defineWorkflow({
  kind: "hello",
  version: 1,
  input: z.object({}),
  steps: { greet: { milestone: { upcoming: "Hello", current: "Saying hello", done: "Said hello" }, run: async () => done({ said: "hello" }) } },
});

/** Processes whose parent is this one, by command name. */
function children(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    try {
      // comm is in parentheses and may hold spaces; the parent pid is the second field after it.
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const [, comm, rest] = /^\d+ \((.*)\) (.*)$/s.exec(stat)!;
      if (Number(rest!.split(" ")[1]) === process.pid) found.push(comm!);
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });

const ourDirectories = () => readdirSync(tmpdir()).filter((name) => name.startsWith("fenceline-test-pg-"));

test("with the embedded PostgreSQL: after close no server process, port or data directory remains", async () => {
  const previously = ourDirectories();
  const saved = process.env.DATABASE_URL;
  delete process.env.DATABASE_URL;
  try {
    const env = await createTestEnvironment({ workflows: [hello] });
    const port = Number(new URL(env.databaseUrl).port);
    expect(children()).toContain("postgres");
    expect(ourDirectories().length).toBe(previously.length + 1);
    const request = await env.createRequest(hello, {});
    await env.waitForRequest(request.id, "completed");
    await env.close();

    expect(children()).not.toContain("postgres");
    expect(await listening(port)).toBe(false);
    expect(ourDirectories()).toEqual(previously);
  } finally {
    if (saved !== undefined) process.env.DATABASE_URL = saved;
  }
});

test("with DATABASE_URL: the environment's database is created there and dropped on close, and no server is started", async () => {
  const saved = process.env.DATABASE_URL;
  const server = inject("databaseServerUrl");
  process.env.DATABASE_URL = server;
  try {
    const env = await createTestEnvironment({ workflows: [hello] });
    const name = decodeURIComponent(new URL(env.databaseUrl).pathname.slice(1));
    expect(new URL(env.databaseUrl).host).toBe(new URL(server).host);
    expect(children()).not.toContain("postgres");
    const request = await env.createRequest(hello, {});
    await env.waitForRequest(request.id, "completed");
    await env.close();

    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    try {
      const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
      expect(rowCount).toBe(0);
    } finally {
      await admin.end();
    }
  } finally {
    if (saved === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = saved;
  }
});
