/** Waiting for a database server to accept connections (readiness.ts). */
import { expect, inject, test } from "vitest";
import { freePort } from "@/lib/net/free-port";
import { waitForDatabase } from "./readiness";

test("a server that accepts connections is ready at once", async () => {
  await expect(waitForDatabase(inject("databaseServerUrl"), { timeoutMs: 5_000 })).resolves.toBe(true);
});

test("a port nothing listens on times out, naming the server and not the password", async () => {
  const port = await freePort();
  const waited = waitForDatabase(`postgresql://postgres:secret@127.0.0.1:${port}/postgres`, { timeoutMs: 300 });
  await expect(waited).rejects.toThrow(new RegExp(`^PostgreSQL at 127\\.0\\.0\\.1:${port} did not accept a connection within 300 ms \\(.*ECONNREFUSED`));
  await expect(waited.catch((error: Error) => error.message)).resolves.not.toContain("secret");
});

test("the wait ends, not ready, when the serving process exits or the caller cancels", async () => {
  const url = `postgresql://postgres@127.0.0.1:${await freePort()}/postgres`;
  let exit = () => undefined as void;
  const exited = new Promise<void>((resolve) => (exit = resolve));
  const waited = waitForDatabase(url, { timeoutMs: 60_000, exited });
  exit();
  await expect(waited).resolves.toBe(false);
  let stopping = false;
  const cancelled = waitForDatabase(url, { timeoutMs: 60_000, cancelled: () => stopping });
  stopping = true;
  await expect(cancelled).resolves.toBe(false);
});
