/**
 * Behind PgBouncer in transaction mode, `npm run retention` and `npm run epoch:transition` need a
 * session of their own, so they connect to DATABASE_DIRECT_URL when it is set: with DATABASE_URL
 * refusing every connection they still do their work, and with the direct URL refusing they fail
 * although DATABASE_URL would answer.
 */
import { describe, expect } from "vitest";
import { freePort } from "@/lib/net/free-port";
import { dbTest as test } from "@/lib/db/test-database";
import { projectCommands, runToEnd } from "./test-commands";

const nodeArgsOf = (script: string) => {
  const found = projectCommands().find((candidate) => candidate.script === script);
  if (!found) throw new Error(`package.json has no script "${script}"`);
  return found.nodeArgs;
};

describe.each([
  { script: "retention", says: /"keptDays":30/ },
  { script: "epoch:transition", says: /"state": "completed"/ },
])("npm run $script", ({ script, says }) => {
  test("connects to DATABASE_DIRECT_URL, not DATABASE_URL, when it is set", async ({ db }) => {
    const refusing = `postgresql://postgres@127.0.0.1:${await freePort()}/app`;
    const direct = await runToEnd(nodeArgsOf(script), [], { DATABASE_URL: refusing, DATABASE_DIRECT_URL: db.url });
    expect(direct.code, direct.stdout + direct.stderr).toBe(0);
    expect(direct.stdout).toMatch(says);

    const refused = await runToEnd(nodeArgsOf(script), [], { DATABASE_URL: db.url, DATABASE_DIRECT_URL: refusing });
    expect(refused.code, refused.stdout + refused.stderr).toBe(1);
    expect(refused.stdout + refused.stderr).toMatch(/ECONNREFUSED/);
  });
});
