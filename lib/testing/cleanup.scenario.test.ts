/**
 * A test environment leaves nothing behind: after close, its database is gone, the embedded
 * PostgreSQL it started has stopped (no server process, nothing listening, no data directory),
 * and with DATABASE_URL only the environment's own database was created and dropped. Attempts a
 * test left paused or killed do not keep close waiting.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import net from "node:net";
import path from "node:path";
import pg from "pg";
import { expect, inject, test } from "vitest";
import { z } from "zod";
import { embeddedUnavailable } from "@/lib/cli/test-commands";
import { defineWorkflow, done } from "@/lib/sdk";
import { createTestEnvironment, fakeDestination } from "@/lib/sdk/testing";

// As root, the embedded PostgreSQL runs as the postgres user, which a checkout under a private
// directory does not let in (the kit then says so, and adopters set DATABASE_URL).
const unavailable = embeddedUnavailable();
const skipped = unavailable ? ` (skipped: ${unavailable})` : "";

const hello = defineWorkflow({
  kind: "hello",
  version: 1,
  input: z.object({}),
  steps: { greet: { milestone: { upcoming: "Hello", current: "Saying hello", done: "Said hello" }, run: async () => done({ said: "hello" }) } },
});

/** Processes whose parent is this one: command name and arguments. */
function children(): { comm: string; args: string[] }[] {
  const found: { comm: string; args: string[] }[] = [];
  for (const pid of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    try {
      // comm is in parentheses and may hold spaces; the parent pid is the second field after it.
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const [, comm, rest] = /^\d+ \((.*)\) (.*)$/s.exec(stat)!;
      if (Number(rest!.split(" ")[1]) === process.pid) found.push({ comm: comm!, args: readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0") });
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

const postgresChildren = () => children().filter((child) => child.comm === "postgres");
/** A server's data directory, as its command line names it. */
const dataDirectoryOf = (server: { args: string[] }) => server.args[server.args.indexOf("-D") + 1];

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });

test.skipIf(unavailable)(`with the embedded PostgreSQL: after close no server process, port or data directory remains${skipped}`, async () => {
  const saved = process.env.DATABASE_URL;
  delete process.env.DATABASE_URL;
  try {
    const env = await createTestEnvironment({ workflows: [hello] });
    const port = Number(new URL(env.databaseUrl).port);
    const [server] = postgresChildren();
    const dataDirectory = server!.args[server!.args.indexOf("-D") + 1]!;
    expect(dataDirectory.startsWith(path.join(tmpdir(), "fenceline-test-pg-"))).toBe(true);
    expect(existsSync(dataDirectory)).toBe(true);
    const request = await env.createRequest(hello, {});
    await env.waitForRequest(request.id, "completed");
    await env.close();

    expect(postgresChildren()).toEqual([]);
    expect(await listening(port)).toBe(false);
    expect(existsSync(path.dirname(dataDirectory))).toBe(false);
  } finally {
    if (saved !== undefined) process.env.DATABASE_URL = saved;
  }
});

test("with DATABASE_URL: the environment's database is created there and dropped on close, and no server is started", async () => {
  const saved = process.env.DATABASE_URL;
  const server = inject("databaseServerUrl");
  process.env.DATABASE_URL = server;
  // Servers this test did not start (another test's, still closing) are not its to count.
  const running = new Set(postgresChildren().map(dataDirectoryOf));
  const startedHere = () => postgresChildren().filter((child) => !running.has(dataDirectoryOf(child)));
  try {
    const env = await createTestEnvironment({ workflows: [hello] });
    const name = decodeURIComponent(new URL(env.databaseUrl).pathname.slice(1));
    expect(new URL(env.databaseUrl).host).toBe(new URL(server).host);
    expect(startedHere()).toEqual([]);
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

test.skipIf(unavailable)(`close ends attempts left paused or killed, and still stops everything${skipped}`, async () => {
  const saved = process.env.DATABASE_URL;
  delete process.env.DATABASE_URL;
  try {
    const mailer = fakeDestination<unknown>("idempotent", { name: "mailer" });
    const send = defineWorkflow({
      kind: "send",
      version: 1,
      input: z.object({}),
      steps: { send: { adapter: mailer.adapter, milestone: { upcoming: "Sending", current: "Sending it", done: "Sent" } } },
    });
    const env = await createTestEnvironment({ workflows: [send] });
    const paused = env.faults.pauseAt("destination_answered", { step: "send" });
    const killed = env.faults.killAt("invocation_began", { step: "send" });
    await env.createRequest(send, {});
    await env.createRequest(send, {});
    await Promise.all([paused.reached, killed.reached]);

    const started = performance.now();
    await env.close();
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(postgresChildren()).toEqual([]);
  } finally {
    if (saved !== undefined) process.env.DATABASE_URL = saved;
  }
});
