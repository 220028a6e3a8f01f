// Runs `prisma generate` without network access. Prisma's CLI downloads a native schema-engine
// binary before any command unless PRISMA_SCHEMA_ENGINE_BINARY names an existing file; generate
// never executes it, so any file will do. Extra arguments are passed through.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const prismaCli = require.resolve("prisma/build/index.js");

const result = spawnSync(process.execPath, [prismaCli, "generate", ...process.argv.slice(2)], {
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
