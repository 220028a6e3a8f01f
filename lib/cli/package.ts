/**
 * `npm run package`: builds the `fenceline` package (lib/sdk/package/build.ts) and packs it into
 * dist/, printing the tarball an adopter's project installs.
 */
import { buildPackage } from "@/lib/sdk/package/build";
import { command } from "./command";

command({
  name: "npm run package",
  summary: "builds the fenceline package (definitions, worker and client doors) and packs it into dist/fenceline-<version>.tgz.",
  options: {},
  environment: [],
  examples: ["npm run package", "cd my-app && npm install /path/to/fenceline/dist/fenceline-0.1.0.tgz zod"],
});

const built = await buildPackage();
console.log(`${built.tarball}\n${built.files} files, ${(built.bytes / 1024).toFixed(1)} KiB; doors: ${built.doors.map((door) => (door === "." ? "fenceline" : `fenceline/${door.slice(2)}`)).join(", ")}`);
