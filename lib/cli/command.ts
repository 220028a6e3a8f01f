/**
 * What every command shares, so each keeps only its own work in its own file: the help text
 * (`--help`, `-h`), argument parsing (node:util parseArgs), one way to report a failure, and one
 * way to exit.
 *
 * Exit codes: 0 done; 1 failed; 2 the command line was wrong (the usage follows). A mistake the
 * person running the command can fix (a missing or malformed setting, a server that refuses the
 * connection, a database without its tables) is printed as one line; only a bug prints a stack.
 * Every exit, however it comes (the work ends, exit() is called, an error escapes, a signal
 * arrives), first releases the embedded PostgreSQL, which the last process of this checkout to
 * release stops. A command that listens for a signal itself stops in its own way and then calls
 * exit(); any other ends on the signal with 128 + its number.
 */
import { parseArgs } from "node:util";
import { connectionProblem } from "@/lib/db/connection-error";
import { releaseEmbeddedCluster, resolveDatabaseUrl, type ResolvedDatabase } from "@/lib/db/database";
import { SettingError } from "@/lib/env";

export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  /** For a string option; shown in the help. */
  default?: string;
  /** Placeholder of the value in the help, e.g. "n" for `--steps <n>`. */
  valueName?: string;
  description: string;
}

export interface EnvironmentSpec {
  name: string;
  default?: string;
  description: string;
}

export interface CommandSpec<O extends Record<string, OptionSpec>> {
  /** How it is run, e.g. "npm run worker". */
  name: string;
  /** What it does, one sentence. */
  summary: string;
  /** Positional arguments in the synopsis, e.g. "<command> [name]"; none are taken when omitted. */
  positionals?: string;
  /** Synopsis lines, when `name -- [options] positionals` does not say it. */
  usage?: string[];
  /** Lines after the options: subcommands, notes. */
  details?: string[];
  options: O;
  environment: EnvironmentSpec[];
  examples: string[];
  /** The arguments to parse; default process.argv.slice(2). */
  argv?: string[];
}

type Values<O extends Record<string, OptionSpec>> = {
  -readonly [K in keyof O]: O[K]["type"] extends "boolean" ? boolean : O[K] extends { default: string } ? string : string | undefined;
};

/** The command line was wrong: reported with the help, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** A failure the command explains in its message, which is printed alone. */
export class CommandError extends Error {
  override readonly name = "CommandError";
}

/** The database every command uses, and what chooses it. */
export const DATABASE_ENVIRONMENT: EnvironmentSpec[] = [
  { name: "DATABASE_URL", default: "this checkout's embedded PostgreSQL", description: "the PostgreSQL to use" },
  { name: "FENCELINE_DATABASE", default: "app", description: "the database in the embedded PostgreSQL" },
  { name: "EMBEDDED_PG_PORT", default: "54329", description: "port of the embedded PostgreSQL" },
  { name: "EMBEDDED_PG_DATA", default: ".data/pg", description: "data directory of the embedded PostgreSQL" },
];

let current: { name: string; help: string } | undefined;

/**
 * Parses the command line against `spec`. `--help` or `-h` prints the help and exits 0; a wrong
 * command line (here, or a UsageError thrown later) prints what was wrong and the help, and exits
 * 2. From here on, failures and signals are reported and handled as the module header says.
 */
export function command<const O extends Record<string, OptionSpec>>(spec: CommandSpec<O>): { values: Values<O>; positionals: string[] } {
  const help = helpText(spec);
  current = { name: spec.name, help };
  installExitHandling();

  const args = spec.argv ?? process.argv.slice(2);
  const ownArgs = args.includes("--") ? args.slice(0, args.indexOf("--")) : args;
  if (ownArgs.includes("--help") || ownArgs.includes("-h")) {
    process.stdout.write(help);
    process.exit(0);
  }
  const options = Object.fromEntries(
    Object.entries(spec.options).map(([name, { type, short, default: fallback }]) => [
      name,
      { type, ...(short ? { short } : {}), ...(type === "boolean" ? { default: false } : fallback !== undefined ? { default: fallback } : {}) },
    ]),
  );
  try {
    const parsed = parseArgs({ args, options, allowPositionals: spec.positionals !== undefined, strict: true });
    return { values: parsed.values as Values<O>, positionals: parsed.positionals };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code !== "string" || !code.startsWith("ERR_PARSE_ARGS_")) throw error;
    // parseArgs's own text ends with advice on "--" that does not apply to npm scripts.
    const first = (error as Error).message.split(". ")[0]!;
    throw new UsageError(code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" ? `unknown option ${first.replace(/^Unknown option /, "")}` : first);
  }
}

/** A number option: finite and above zero, else a usage failure naming the option. */
export function positiveNumber(option: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new UsageError(`--${option} must be a positive number, got "${raw}"`);
  return value;
}

/** A comma-separated option whose items must come from `allowed`. */
export function listOf<T extends string>(option: string, raw: string, allowed: readonly T[]): T[] {
  const items = raw.split(",").filter(Boolean);
  const unknown = items.filter((item) => !(allowed as readonly string[]).includes(item));
  if (items.length === 0 || unknown.length > 0) throw new UsageError(`--${option} takes ${allowed.join(", ")} (comma-separated); got "${raw}"`);
  return items as T[];
}

/** Runs the parse of a setting; whatever it throws is the setting's fault, not a bug. */
export function setting<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new SettingError(error instanceof Error ? error.message : String(error), { cause: error });
  }
}

/**
 * The application's database, found as `npm start` finds it: DATABASE_URL as given, else the
 * embedded cluster's FENCELINE_DATABASE (default "app"), started if needed. exit() releases it.
 * (A harness hands its workers a DATABASE_URL of their own: a FENCELINE_DATABASE it inherited
 * must not send them elsewhere.)
 */
export function resolveAppDatabase(): Promise<ResolvedDatabase> {
  return resolveDatabaseUrl({ database: process.env.DATABASE_URL ? undefined : process.env.FENCELINE_DATABASE || undefined });
}

/**
 * DATABASE_ENVIRONMENT with DATABASE_DIRECT_URL, for the commands that need a session of their
 * own (DDL under `SET LOCAL lock_timeout`, session advisory locks): behind PgBouncer in
 * transaction mode they connect past it, as lib/db/pool.ts directDatabaseUrl resolves it.
 */
export const SESSION_DATABASE_ENVIRONMENT: EnvironmentSpec[] = [
  { name: "DATABASE_DIRECT_URL", default: "unset", description: "the database without the pooler; used instead of DATABASE_URL when set" },
  ...DATABASE_ENVIRONMENT,
];

let exiting: Promise<never> | undefined;

/** Releases the embedded database, then ends the process with `code`. Later calls wait for the first. */
export function exit(code: number): Promise<never> {
  exiting ??= (async () => {
    let exitCode = code;
    try {
      await releaseEmbeddedCluster();
    } catch (error) {
      process.stderr.write(`[db] could not stop the embedded PostgreSQL: ${error instanceof Error ? error.message : String(error)}\n`);
      exitCode ||= 1;
    }
    process.exit(exitCode);
  })();
  return exiting;
}

/** How a failure reads to the person who ran the command: one line, or a stack for a bug. */
export function describeFailure(error: unknown): string {
  if (error instanceof SettingError || error instanceof CommandError) return error.message;
  const problem = connectionProblem(error);
  if (problem) return `cannot reach PostgreSQL: ${problem}`;
  const code = (error as { code?: unknown } | null)?.code;
  // 42P01: no such table; 3F000: no such schema. A database nobody migrated.
  if (code === "42P01" || code === "3F000") {
    return `the database has no Fenceline tables (${(error as Error).message}): apply the migrations with \`npm run db:migrate\` (npm start does it too)`;
  }
  if (error instanceof TypeError && error.message === "fetch failed" && error.cause instanceof Error) {
    return `a request failed: ${error.cause.message}`;
  }
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

let handlingInstalled = false;

function installExitHandling(): void {
  if (handlingInstalled) return;
  handlingInstalled = true;
  // An error nothing caught, a top-level await that rejected included.
  process.on("uncaughtException", (error) => {
    if (exiting) return;
    const name = current?.name ?? "command";
    if (error instanceof UsageError) {
      process.stderr.write(`${name}: ${error.message}\n\n${current?.help ?? ""}`);
      void exit(2);
      return;
    }
    process.stderr.write(`${name}: ${describeFailure(error)}\n`);
    void exit(1);
  });
  // The work is done and nothing keeps the process alive.
  process.once("beforeExit", () => void exit(Number(process.exitCode ?? 0)));
  for (const [signal, number] of [["SIGINT", 2], ["SIGTERM", 15], ["SIGHUP", 1]] as const) {
    process.on(signal, () => {
      // A command that stops itself gracefully listens too, and calls exit() when done; until it
      // listens (while it starts), a signal ends it here.
      if (exiting || process.listenerCount(signal) > 1) return;
      process.stderr.write(`${current?.name ?? "command"}: ${signal}: stopping\n`);
      void exit(128 + number);
    });
  }
}

const HELP_WIDTH = 100;

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line];
}

function helpText<O extends Record<string, OptionSpec>>(spec: CommandSpec<O>): string {
  const rows = (entries: [string, string][]) => {
    const width = Math.max(...entries.map(([left]) => left.length)) + 2;
    return entries.map(([left, right]) => `  ${left.padEnd(width)}${right}`);
  };
  const synopsis = spec.usage ?? [[spec.name, spec.name.startsWith("npm") ? "--" : "", "[options]", spec.positionals ?? ""].filter(Boolean).join(" ")];
  const options: [string, string][] = Object.entries(spec.options).map(([name, option]) => [
    `${option.short ? `-${option.short}, ` : ""}--${name}${option.type === "string" ? ` <${option.valueName ?? "value"}>` : ""}`,
    `${option.description}${option.default !== undefined ? ` (default: ${option.default})` : ""}`,
  ]);
  options.push(["-h, --help", "print this help and exit"]);
  const environment: [string, string][] = spec.environment.map((variable) => [
    variable.name,
    `${variable.description}${variable.default !== undefined ? ` (default: ${variable.default})` : ""}`,
  ]);
  return [
    ...wrap(`${spec.name}: ${spec.summary}`, HELP_WIDTH),
    "",
    ...synopsis.map((line, index) => `${index === 0 ? "Usage: " : "       "}${line}`),
    "",
    "Options:",
    ...rows(options),
    ...(spec.details?.length ? ["", ...spec.details] : []),
    "",
    "Environment:",
    ...(environment.length ? rows(environment) : ["  none"]),
    "",
    spec.examples.length > 1 ? "Examples:" : "Example:",
    ...spec.examples.map((example) => `  ${example}`),
    "",
  ].join("\n");
}
