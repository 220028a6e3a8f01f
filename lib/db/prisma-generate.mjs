// Runs `prisma generate` without network access. Prisma's CLI downloads a native schema-engine
// binary before any command unless PRISMA_SCHEMA_ENGINE_BINARY names an existing file; generate
// never executes it, so any file will do. Generate's own options are passed through.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const HELP = `npm run db:generate: writes the Prisma client for prisma/schema.prisma into lib/generated/prisma (npm install runs it), without network access.

Usage: npm run db:generate -- [options]

Options (all but --help go to \`prisma generate\`):
  --schema <path>     another Prisma schema
  --config <path>     another Prisma config file
  --generator <name>  only this generator (repeatable)
  --watch             generate again after each change of the schema
  --sql               also the typed SQL module
  --no-hints          no hint messages
  --require-models    refuse a schema without models
  -h, --help          print this help and exit

Environment:
  PRISMA_SCHEMA_ENGINE_BINARY  a file to name as the schema engine, never run by generate (default: node itself)

Example:
  npm run db:generate
`;

// Plain JavaScript (it runs at npm install, before anything could be built), so its own small
// version of lib/cli/command.ts's rules: help exits 0, a wrong option prints it and exits 2.
const args = process.argv.slice(2);
if (args.includes("--help") || args.includes("-h")) {
  process.stdout.write(HELP);
  process.exit(0);
}
try {
  parseArgs({
    args,
    strict: true,
    options: {
      schema: { type: "string" },
      config: { type: "string" },
      generator: { type: "string", multiple: true },
      watch: { type: "boolean" },
      sql: { type: "boolean" },
      "no-hints": { type: "boolean" },
      "require-models": { type: "boolean" },
    },
  });
} catch (error) {
  process.stderr.write(`npm run db:generate: ${error.message.split(". ")[0]}\n\n${HELP}`);
  process.exit(2);
}

const require = createRequire(import.meta.url);
const prismaCli = require.resolve("prisma/build/index.js");

const result = spawnSync(process.execPath, [prismaCli, "generate", ...args], {
  cwd: fileURLToPath(new URL("../..", import.meta.url)),
  stdio: "inherit",
  env: {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
    CHECKPOINT_DISABLE: "1",
    PRISMA_HIDE_UPDATE_MESSAGE: "1",
  },
});
process.exit(result.status ?? 1);
