/**
 * Loopback ports for servers a process starts: tests, scenarios, benchmarks, and the package's
 * `fenceline/testing` (its embedded PostgreSQL), which is why this lives outside the test support
 * and imports only Node.
 */
import net from "node:net";

/** A loopback port nothing listens on now, the kernel's pick (from the ephemeral range). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Below the ephemeral range (Linux's starts at 32768), where the kernel hands out no port 0. */
const FIXED_RANGE = { from: 20_000, size: 12_000 };

/**
 * The first of `count` consecutive loopback ports that nothing listens on now and that are not
 * in `avoid`. They lie below the ephemeral range: a process that is handed them and binds them
 * some time later cannot find one taken by a server that bound port 0 meanwhile (the kernel
 * would not pick it), as a port from `freePort` can be.
 */
export async function freePortRun(count = 1, avoid: readonly number[] = []): Promise<number> {
  for (;;) {
    const first = FIXED_RANGE.from + Math.floor(Math.random() * (FIXED_RANGE.size - count));
    const ports = Array.from({ length: count }, (_, i) => first + i);
    if (ports.some((port) => avoid.includes(port))) continue;
    let free = true;
    for (const port of ports) free &&= await listenable(port);
    if (free) return first;
  }
}

async function listenable(port: number): Promise<boolean> {
  const server = net.createServer();
  const listening = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => resolve(true));
  });
  if (listening) await new Promise((resolve) => server.close(resolve));
  return listening;
}
