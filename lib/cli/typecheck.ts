/**
 * `npm run typecheck` (and the first runner of `npm test`): installs the bench's peers package if
 * it is not yet (lib/bench/peers: their types are part of the check), writes Next's route types
 * (`next typegen`; a fresh clone has none), then runs `tsc --noEmit` over the whole repository.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { installPeers } from "@/lib/bench/peers";
import { command, exit } from "./command";

command({
  name: "npm run typecheck",
  summary: "type-checks the whole repository (tsc --noEmit) after writing Next's route types; installs the bench's peers package first if it is missing.",
  options: {},
  environment: [],
  examples: ["npm run typecheck"],
});

const root = fileURLToPath(new URL("../..", import.meta.url));
const bin = (...parts: string[]) => path.join(root, "node_modules", ...parts);

function run(args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: "inherit" });
    child.once("error", () => resolve(1));
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

await installPeers((line) => console.log(line));
const typegen = await run([bin("next", "dist", "bin", "next"), "typegen"]);
await exit(typegen === 0 ? await run([bin("typescript", "bin", "tsc"), "--noEmit"]) : typegen);
