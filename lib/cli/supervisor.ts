/**
 * Runs the named child processes behind `npm start` (synthetic destination service, web server,
 * workers, demo traffic) and stops them together.
 *
 * Each child is running until it exits. stopAll() moves every running child to stopping: it
 * sends SIGTERM, and SIGKILL to any child still running after the grace period. An exit that
 * was neither asked for by stop nor expected (a one-shot task such as `next build`) is reported
 * through onUnexpectedExit, so the owner can decide to shut everything down.
 *
 * Children stay in the supervisor's process group: a signal sent to the whole group (Ctrl-C in a
 * terminal, Playwright's webServer teardown) reaches them even if the supervisor is killed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import type { Writable } from "node:stream";

export interface ChildSpec {
  /** Prefixes every output line, e.g. "web" or "worker-1". Unique among running children. */
  name: string;
  command: string;
  args: string[];
  /** Added to the supervisor's own environment. */
  env?: Record<string, string>;
  cwd?: string;
  /** A task that finishes by itself (a build): its exit is not reported as unexpected. */
  oneShot?: boolean;
  /**
   * Started again (after a short pause) when it exits on its own, instead of being reported as
   * unexpected: a worker killed from the fault lab comes back as a new session, and recovery
   * decides what its old leases leave behind.
   */
  restart?: boolean;
  /**
   * Children stop in waves, lowest first (default 0): workers must be able to reach the web app
   * and the destination while they hand back their work.
   */
  stopWave?: number;
}

export interface ChildExit {
  name: string;
  /** null when the child was ended by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SupervisedChild {
  name: string;
  pid: number | undefined;
  /** Settles when the child has exited, for whatever reason. */
  exited: Promise<ChildExit>;
  /**
   * Resolves with the match of the first later stdout line matching `pattern` (a ready line);
   * rejects if the child exits first or no line matches within `timeoutMs`.
   */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
}

export interface SupervisorOptions {
  /** How long a child may take to exit after SIGTERM before it gets SIGKILL. */
  stopGraceMs?: number;
  onUnexpectedExit?: (exit: ChildExit) => void;
}

const DEFAULT_STOP_GRACE_MS = 10_000;
const RESTART_DELAY_MS = 1_000;

export class Supervisor {
  private readonly running = new Map<string, { process: ChildProcess; exited: Promise<ChildExit>; stopWave: number }>();
  private stopping = false;

  constructor(private readonly options: SupervisorOptions = {}) {}

  start(spec: ChildSpec): SupervisedChild {
    if (this.stopping) throw new Error(`cannot start ${spec.name}: the supervisor is stopping`);
    if (this.running.has(spec.name)) throw new Error(`a child named ${spec.name} is already running`);

    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: { ...process.env, ...spec.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const lineListeners = new Set<(line: string) => void>();
    prefixLines(child.stdout, process.stdout, spec.name, (line) => lineListeners.forEach((listener) => listener(line)));
    prefixLines(child.stderr, process.stderr, spec.name);

    const exited = new Promise<ChildExit>((resolve) => {
      child.once("error", (error) => {
        // Spawn failed (e.g. no such command): no exit event follows.
        log(spec.name, `could not start: ${error.message}`);
        resolve({ name: spec.name, code: null, signal: null });
      });
      child.once("exit", (code, signal) => resolve({ name: spec.name, code, signal }));
    }).then((exit) => {
      this.running.delete(spec.name);
      if (!this.stopping && spec.restart) {
        log(spec.name, `exited (code ${exit.code}, signal ${exit.signal}): starting it again in ${RESTART_DELAY_MS} ms`);
        setTimeout(() => {
          if (!this.stopping) this.start(spec);
        }, RESTART_DELAY_MS);
      } else if (!this.stopping && !(spec.oneShot && exit.code === 0)) this.options.onUnexpectedExit?.(exit);
      return exit;
    });

    this.running.set(spec.name, { process: child, exited, stopWave: spec.stopWave ?? 0 });

    const waitForLine = (pattern: RegExp, timeoutMs: number) =>
      new Promise<RegExpMatchArray>((resolve, reject) => {
        const settle = (outcome: () => void) => {
          lineListeners.delete(listener);
          clearTimeout(timer);
          outcome();
        };
        const listener = (line: string) => {
          const match = line.match(pattern);
          if (match) settle(() => resolve(match));
        };
        const timer = setTimeout(() => settle(() => reject(new Error(`${spec.name} printed no line matching ${pattern} within ${timeoutMs} ms`))), timeoutMs);
        lineListeners.add(listener);
        void exited.then((exit) => settle(() => reject(new Error(`${spec.name} exited (code ${exit.code}, signal ${exit.signal}) before printing a line matching ${pattern}`))));
      });

    return { name: spec.name, pid: child.pid, exited, waitForLine };
  }

  /** Names of the children still running, in start order. */
  names(): string[] {
    return [...this.running.keys()];
  }

  /** Stops every running child; resolves when all have exited. Idempotent. */
  async stopAll(): Promise<ChildExit[]> {
    this.stopping = true;
    const graceMs = this.options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
    const children = [...this.running.entries()];
    const waves = [...new Set(children.map(([, child]) => child.stopWave))].sort((a, b) => a - b);
    const exits: ChildExit[] = [];
    for (const wave of waves) {
      const stopping = children.filter(([, child]) => child.stopWave === wave);
      exits.push(...(await Promise.all(stopping.map(([name, { process: child, exited }]) => this.stopOne(name, child, exited, graceMs)))));
    }
    return exits;
  }

  private async stopOne(name: string, child: ChildProcess, exited: Promise<ChildExit>, graceMs: number): Promise<ChildExit> {
    child.kill("SIGTERM");
    const timer = setTimeout(() => {
      log(name, `still running ${graceMs} ms after SIGTERM: sending SIGKILL`);
      child.kill("SIGKILL");
    }, graceMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

function prefixLines(from: NodeJS.ReadableStream, to: Writable, name: string, onLine?: (line: string) => void): void {
  createInterface({ input: from, crlfDelay: Infinity }).on("line", (line) => {
    to.write(`[${name}] ${line}\n`);
    onLine?.(line);
  });
}

/** Writes one line as the supervisor does for its children, e.g. `[start] ready`. */
export function log(name: string, message: string): void {
  process.stdout.write(`[${name}] ${message}\n`);
}
