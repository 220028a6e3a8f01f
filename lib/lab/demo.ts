/**
 * The demo, one setting: FENCELINE_DEMO.
 *
 *   on        demo sign-ins (one staff account per role), the fault lab, and demo traffic
 *   sign-ins  demo sign-ins and the fault lab, no demo traffic
 *   off       none of them: accounts are made by an admin, the lab's routes answer 404
 *
 * `npm start` defaults to `on` and hands its value to every process it starts; the web app run by
 * itself (a deployment's `next start`) defaults to `off`. The fault lab also needs the synthetic
 * destination (FENCELINE_DESTINATION_URL), and with it anonymous requests are accepted
 * (rate-limited). The names it replaces are still read, each with a one-line notice:
 * FENCELINE_DEMO=1 / 0 (traffic on / off) and FENCELINE_MODE (`demo` or anything else).
 */
import { SettingError } from "@/lib/env";
import { LabUnavailableError } from "./errors";

export const DEMO_SETTINGS = ["on", "sign-ins", "off"] as const;
export type DemoSetting = (typeof DEMO_SETTINGS)[number];

const told = new Set<string>();
const tellOnce = (line: string) => {
  if (told.has(line)) return;
  told.add(line);
  process.stderr.write(`${line}\n`);
};

/** FENCELINE_DEMO, or what the deprecated names say, or `fallback` when nothing is set. */
export function demoSetting(fallback: DemoSetting, env: Readonly<Record<string, string | undefined>> = process.env, notice: (line: string) => void = tellOnce): DemoSetting {
  const demo = env.FENCELINE_DEMO?.trim();
  const mode = env.FENCELINE_MODE?.trim();
  if (demo === "0" || demo === "1") {
    const read: DemoSetting = mode && mode !== "demo" ? "off" : demo === "1" ? "on" : "sign-ins";
    notice(`FENCELINE_DEMO=${demo}${mode ? ` with FENCELINE_MODE=${mode}` : ""} is deprecated: read as FENCELINE_DEMO=${read} (on, sign-ins or off)`);
    return read;
  }
  if (demo) {
    if (!(DEMO_SETTINGS as readonly string[]).includes(demo)) throw new SettingError(`FENCELINE_DEMO must be on, sign-ins or off, got "${demo}"`);
    if (mode) notice(`FENCELINE_MODE is deprecated and ignored beside FENCELINE_DEMO=${demo}`);
    return demo as DemoSetting;
  }
  if (mode) {
    const read: DemoSetting = mode === "demo" ? "on" : "off";
    notice(`FENCELINE_MODE=${mode} is deprecated: read as FENCELINE_DEMO=${read} (on, sign-ins or off)`);
    return read;
  }
  return fallback;
}

/** The web app's demo mode: sign-ins and the fault lab, with the synthetic destination's URL. */
export function demoMode(): { destinationUrl: string } | null {
  const destinationUrl = process.env.FENCELINE_DESTINATION_URL;
  if (demoSetting("off") === "off" || !destinationUrl) return null;
  return { destinationUrl };
}

export function requireDemo(): { destinationUrl: string } {
  const demo = demoMode();
  if (!demo) throw new LabUnavailableError();
  return demo;
}
