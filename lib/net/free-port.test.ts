/** Free loopback ports (free-port.ts): what they return can be bound, and a run is consecutive. */
import net from "node:net";
import { expect, test } from "vitest";
import { freePort, freePortRun } from "./free-port";

/** Binds every port (each must be free) and lets them go again. */
async function bindAll(ports: readonly number[]): Promise<void> {
  const servers = await Promise.all(
    ports.map(
      (port) =>
        new Promise<net.Server>((resolve, reject) => {
          const server = net.createServer();
          server.once("error", reject);
          server.listen(port, "127.0.0.1", () => resolve(server));
        }),
    ),
  );
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
}

test("freePort gives a port that can be bound", async () => {
  await bindAll([await freePort()]);
});

test("freePortRun gives the first of consecutive free ports below the ephemeral range, none of them avoided", async () => {
  for (let i = 0; i < 20; i += 1) {
    const avoid = [await freePortRun()];
    const first = await freePortRun(3, avoid);
    const run = [first, first + 1, first + 2];
    expect(run.some((port) => avoid.includes(port))).toBe(false);
    expect(first).toBeGreaterThanOrEqual(20_000);
    expect(first + 2).toBeLessThan(32_768);
    await bindAll(run);
  }
});
