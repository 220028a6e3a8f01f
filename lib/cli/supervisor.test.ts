/**
 * The supervisor behind npm start: a child marked `restart` comes back after it dies; any other
 * child's unexpected exit is reported; stopAll stops children in waves, lowest first.
 */
import { expect, test, vi } from "vitest";
import { Supervisor, type ChildExit } from "./supervisor";

const node = (code: string) => ({ command: process.execPath, args: ["-e", code] });

test("a child marked restart is started again after it exits on its own", async () => {
  const unexpected: ChildExit[] = [];
  const supervisor = new Supervisor({ onUnexpectedExit: (exit) => unexpected.push(exit) });
  const starts = vi.spyOn(supervisor, "start");
  supervisor.start({ name: "flaky", ...node("console.log('up'); setTimeout(() => process.exit(3), 50)"), restart: true });
  await vi.waitFor(() => expect(starts.mock.calls.length).toBeGreaterThanOrEqual(2), { timeout: 5_000 });
  await supervisor.stopAll();
  expect(unexpected).toEqual([]);
});

test("an unexpected exit of any other child is reported", async () => {
  const unexpected: ChildExit[] = [];
  const supervisor = new Supervisor({ onUnexpectedExit: (exit) => unexpected.push(exit) });
  const child = supervisor.start({ name: "web", ...node("process.exit(2)") });
  await child.exited;
  expect(unexpected).toEqual([{ name: "web", code: 2, signal: null }]);
});

test("stopAll stops the lowest wave first and waits for it before the next", async () => {
  const supervisor = new Supervisor();
  const keepAlive = "process.on('SIGTERM', () => process.exit(0)); console.log('ready'); setInterval(() => {}, 1000)";
  const web = supervisor.start({ name: "web", ...node(keepAlive), stopWave: 1 });
  const worker = supervisor.start({ name: "worker", ...node(keepAlive) });
  await Promise.all([web.waitForLine(/^ready$/, 5_000), worker.waitForLine(/^ready$/, 5_000)]);
  const order: string[] = [];
  void worker.exited.then(() => order.push("worker"));
  void web.exited.then(() => order.push("web"));
  await supervisor.stopAll();
  expect(order).toEqual(["worker", "web"]);
});
