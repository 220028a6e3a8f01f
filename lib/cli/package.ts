/**
 * `npm run package`: builds the `fenceline` package (lib/sdk/package/build.ts) and its companion
 * `fenceline-dashboard` (lib/sdk/package/dashboard.ts) and packs both into dist/, printing the
 * tarballs an adopter's project installs. FENCELINE_PACKAGE_DASHBOARD=0 builds only `fenceline`.
 */
import { buildDashboardPackage } from "@/lib/sdk/package/dashboard";
import { buildPackage } from "@/lib/sdk/package/build";
import { command } from "./command";

command({
  name: "npm run package",
  summary:
    "builds the fenceline package (definitions, worker, client, react and testing doors, the fenceline command) into dist/fenceline-<version>.tgz, and the dashboard and HTTP API that `fenceline dev` starts into dist/fenceline-dashboard-<version>.tgz.",
  options: {},
  environment: [{ name: "FENCELINE_PACKAGE_DASHBOARD", default: "1", description: "0: skip fenceline-dashboard (its next build takes minutes)" }],
  examples: ["npm run package", "cd my-app && npm install /path/to/fenceline/dist/fenceline-0.1.0.tgz zod && npm install -D /path/to/fenceline/dist/fenceline-dashboard-0.1.0.tgz"],
});

const KIB = 1024;
const built = await buildPackage();
console.log(`${built.tarball}\n${built.files} files, ${(built.bytes / KIB).toFixed(1)} KiB; doors: ${built.doors.map((door) => (door === "." ? "fenceline" : `fenceline/${door.slice(2)}`)).join(", ")}`);
if (process.env.FENCELINE_PACKAGE_DASHBOARD !== "0") {
  console.log("building the dashboard (next build, standalone)…");
  const dashboard = await buildDashboardPackage();
  console.log(`${dashboard.tarball}\n${dashboard.files} files, ${(dashboard.bytes / KIB / KIB).toFixed(1)} MiB (${(dashboard.unpackedBytes / KIB / KIB).toFixed(1)} MiB installed)`);
}
