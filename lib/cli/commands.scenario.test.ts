/**
 * Every command of package.json answers like the others: `--help` and `-h` print its usage,
 * options, environment and an example and exit 0; an unknown option prints the usage and exits
 * 2; a user's mistake (a malformed or missing setting, a database that refuses the connection)
 * ends in one plain line, never a stack trace, and leaves no postgres process behind.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { freePort } from "@/lib/net/free-port";
import { postgresProcesses, projectCommands, runToEnd, STACK_LINE, throwawayEmbedded, type ThrowawayEmbedded } from "./test-commands";

const commands = projectCommands();
const byScript = (script: string) => {
  const found = commands.find((candidate) => candidate.script === script);
  if (!found) throw new Error(`package.json has no script "${script}" that runs a file of this repository`);
  return found;
};

test("the commands found in package.json are the ones this file knows", () => {
  // A new command must join the mistakes below, not only the help checks.
  expect(commands.map((command) => command.script).sort()).toEqual(
    ["bench", "db:generate", "docs", "db:migrate", "db:migration:create", "demo:traffic", "epoch:transition", "package", "protocol-server", "relay", "retention", "scenarios", "scorecard", "start", "test", "test:model", "typecheck", "worker"].sort(),
  );
});

describe.each(commands)("npm run $script", ({ script, nodeArgs }) => {
  test("prints its help for --help and -h and exits 0", async () => {
    const [long, short] = await Promise.all([runToEnd(nodeArgs, ["--help"], {}), runToEnd(nodeArgs, ["-h"], {})]);
    expect(long.code, long.stderr).toBe(0);
    for (const part of ["Usage:", "Options", "--help", "Environment:", "Example"]) expect(long.stdout).toContain(part);
    expect(long.stdout).toContain(script === "start" || script === "test" ? `npm ${script}` : `npm run ${script.replace(/^db:migration:create$/, "db:migrate")}`);
    expect(short).toEqual(long);
  });

  test("prints the usage for an unknown option and exits 2", async () => {
    const result = await runToEnd(nodeArgs, ["--no-such-option"], {});
    expect(result.code, result.stdout + result.stderr).toBe(2);
    expect(result.stderr).toMatch(/unknown option '--no-such-option'/i);
    expect(result.stderr).toContain("Usage:");
    expect(result.stderr).not.toMatch(STACK_LINE);
  });
});

/** Mistakes a person makes, per command: what they set or typed, and what the answer must say. */
const mistakes: { script: string; what: string; args?: string[]; env?: Record<string, string>; exitCode: number; says: RegExp }[] = [
  { script: "start", what: "a malformed port", env: { PORT: "eighty" }, exitCode: 1, says: /PORT must be an integer/ },
  { script: "start", what: "an unknown demo setting", env: { FENCELINE_DEMO: "maybe" }, exitCode: 1, says: /FENCELINE_DEMO must be on, sign-ins or off, got "maybe"/ },
  { script: "start", what: "an unknown worker transport", env: { FENCELINE_WORKER_TRANSPORT: "pigeon" }, exitCode: 1, says: /FENCELINE_WORKER_TRANSPORT must be "direct" or "http"/ },
  { script: "worker", what: "the HTTP transport without its coordinator", env: { FENCELINE_WORKER_TRANSPORT: "http" }, exitCode: 1, says: /FENCELINE_COORDINATOR_URL is not set/ },
  { script: "worker", what: "a malformed concurrency", env: { FENCELINE_WORKER_CONCURRENCY: "lots" }, exitCode: 1, says: /FENCELINE_WORKER_CONCURRENCY must be an integer/ },
  { script: "demo:traffic", what: "an unknown fault mix", env: { FENCELINE_DEMO_FAULTS: "wild" }, exitCode: 1, says: /FENCELINE_DEMO_FAULTS must be one of/ },
  { script: "demo:traffic", what: "no app key", env: { FENCELINE_URL: "http://127.0.0.1:9" }, exitCode: 1, says: /FENCELINE_API_KEY is not set/ },
  { script: "retention", what: "a malformed retention period", env: { FENCELINE_RETENTION_DAYS: "forever" }, exitCode: 1, says: /FENCELINE_RETENTION_DAYS must be an integer/ },
  { script: "epoch:transition", what: "a malformed drain time", env: { FENCELINE_EPOCH_DRAIN_MS: "soon" }, exitCode: 1, says: /FENCELINE_EPOCH_DRAIN_MS must be an integer/ },
  { script: "epoch:transition", what: "--reason without its text", args: ["--reason"], exitCode: 2, says: /--reason <value>' argument missing/ },
  { script: "bench", what: "a step count that is not a number", args: ["--steps", "many"], exitCode: 2, says: /--steps must be a positive number/ },
  { script: "bench", what: "an unknown measurement", args: ["--only", "speed"], exitCode: 2, says: /--only takes throughput, latency/ },
  { script: "scenarios", what: "an unknown fault", args: ["--only", "meteor"], exitCode: 2, says: /--only takes kill, pause/ },
  { script: "scenarios", what: "a soak without a duration", args: ["--soak", "forever"], exitCode: 2, says: /--soak takes a duration/ },
  { script: "scorecard", what: "an engine the bench does not run", args: ["--engines", "temporal"], exitCode: 2, says: /--engines takes fenceline, graphileWorker, pgBoss, dbos/ },
  { script: "scorecard", what: "more jobs than a worker runs at once", args: ["--jobs", "9"], exitCode: 2, says: /--jobs takes 1 to 8/ },
  { script: "test:model", what: "a run count that is not a number", args: ["--runs", "all"], exitCode: 2, says: /--runs must be a positive integer/ },
  { script: "db:migrate", what: "an unknown migrate command", args: ["undo"], exitCode: 2, says: /unexpected argument "undo"/ },
  { script: "db:migration:create", what: "no migration name", exitCode: 2, says: /create needs a name/ },
  { script: "test", what: "an unknown runner", args: ["--only", "jest"], exitCode: 2, says: /--only takes typecheck, docs, vitest, playwright/ },
  { script: "relay", what: "a malformed delivery timeout", env: { FENCELINE_WEBHOOK_TIMEOUT_MS: "ten seconds" }, exitCode: 1, says: /FENCELINE_WEBHOOK_TIMEOUT_MS must be an integer/ },
  { script: "package", what: "an argument it does not take", args: ["dist"], exitCode: 2, says: /Unexpected argument 'dist'/ },
  { script: "docs", what: "an argument it does not take", args: ["docs"], exitCode: 2, says: /Unexpected argument 'docs'/ },
  { script: "typecheck", what: "an argument it does not take", args: ["lib"], exitCode: 2, says: /Unexpected argument 'lib'/ },
  { script: "test", what: "runner arguments without --only", args: ["lib/db"], exitCode: 2, says: /Unexpected argument 'lib\/db'/ },
  { script: "worker", what: "a malformed embedded port", env: { EMBEDDED_PG_PORT: "fifty" }, exitCode: 1, says: /EMBEDDED_PG_PORT must be an integer/ },
  { script: "protocol-server", what: "a malformed port", env: { FENCELINE_PROTOCOL_PORT: "any" }, exitCode: 1, says: /FENCELINE_PROTOCOL_PORT must be an integer/ },
  { script: "protocol-server", what: "a port out of range", env: { FENCELINE_PROTOCOL_PORT: "70000" }, exitCode: 1, says: /FENCELINE_PROTOCOL_PORT must be/ },
];

// Commands that reach the database, and the arguments that make them do it first.
const databaseCommands: { script: string; args?: string[] }[] = [
  { script: "start" },
  { script: "worker" },
  { script: "relay" },
  { script: "protocol-server" },
  { script: "retention" },
  { script: "epoch:transition" },
  { script: "bench", args: ["--only", "profile"] },
  { script: "scenarios", args: ["--only", "kill", "--contract", "fenced"] },
  { script: "scorecard", args: ["--engines", "fenceline", "--contracts", "fenced", "--jobs", "1"] },
  { script: "test:model", args: ["--runs", "1"] },
  { script: "db:migrate" },
];

let embedded: ThrowawayEmbedded;
let refusingUrl: string;

beforeAll(async () => {
  // Mistakes are tried with the embedded cluster as the fallback, so one that started it is seen.
  embedded = await throwawayEmbedded();
  // A port just freed: nothing listens there.
  refusingUrl = `postgresql://postgres:postgres@127.0.0.1:${await freePort()}/app`;
});

afterAll(async () => {
  await embedded.remove();
});

describe.each(mistakes)("npm run $script with $what", ({ script, args = [], env = {}, exitCode, says }) => {
  test("says what is wrong in one line and starts no PostgreSQL", async () => {
    const result = await runToEnd(byScript(script).nodeArgs, args, { ...embedded.env, ...env });
    expect(result.code, result.stdout + result.stderr).toBe(exitCode);
    const output = result.stdout + result.stderr;
    expect(output).toMatch(says);
    expect(output).not.toMatch(STACK_LINE);
    expect(postgresProcesses(embedded.dataDir)).toEqual([]);
  });
});

describe.each(databaseCommands)("npm run $script against a DATABASE_URL that refuses the connection", ({ script, args = [] }) => {
  test("says it cannot connect, in one line, and exits 1", async () => {
    const result = await runToEnd(byScript(script).nodeArgs, args, { ...embedded.env, DATABASE_URL: refusingUrl });
    expect(result.code, result.stdout + result.stderr).toBe(1);
    const output = result.stdout + result.stderr;
    expect(output).toMatch(/cannot use the PostgreSQL in DATABASE_URL \(127\.0\.0\.1:\d+\/\w+\): connect ECONNREFUSED/);
    expect(output).not.toMatch(STACK_LINE);
    expect(postgresProcesses(embedded.dataDir)).toEqual([]);
  });
});
