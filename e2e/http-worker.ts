import { spawn, type ChildProcess } from "node:child_process";

/** A worker of the adopter's own, as a process: its definitions' module, the HTTP worker protocol, a worker token. */
export type HttpWorker = { readonly worker: ChildProcess; readonly exited: Promise<void> };

/**
 * Starts `lib/cli/worker.ts` serving the workflows of `definitions` over the HTTP worker protocol
 * at `baseURL`. A worker that dies other than by SIGTERM says why (its last output) in the test's
 * output, under `name`.
 */
export function startHttpWorker(baseURL: string, token: string, definitions: string, name: string): HttpWorker {
  const worker = spawn(process.execPath, ["--import", "tsx", "lib/cli/worker.ts"], {
    env: {
      ...process.env,
      FENCELINE_DEFINITIONS: definitions,
      FENCELINE_WORKER_TRANSPORT: "http",
      FENCELINE_COORDINATOR_URL: baseURL,
      FENCELINE_WORKER_TOKEN: token,
      FENCELINE_POLL_INTERVAL_MS: "200",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const log: string[] = [];
  const keep = (chunk: Buffer) => {
    log.push(chunk.toString());
    if (log.length > 40) log.shift();
  };
  worker.stdout!.on("data", keep);
  worker.stderr!.on("data", keep);
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  worker.once("exit", (code, signal) => {
    if (code !== 0 && signal !== "SIGTERM") console.error(`the ${name} worker exited (${code ?? signal}):\n${log.join("")}`);
  });
  return { worker, exited };
}
