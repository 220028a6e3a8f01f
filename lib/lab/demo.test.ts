import { afterEach, expect, test } from "vitest";
import { SettingError } from "@/lib/env";
import { demoMode, demoSetting } from "./demo";

const read = (env: Record<string, string>, fallback: "on" | "off" = "on") => {
  const notices: string[] = [];
  return { setting: demoSetting(fallback, env, (line) => notices.push(line)), notices };
};

test("FENCELINE_DEMO takes on, sign-ins and off, and nothing set is the caller's default", () => {
  expect(read({ FENCELINE_DEMO: "on" })).toEqual({ setting: "on", notices: [] });
  expect(read({ FENCELINE_DEMO: "sign-ins" })).toEqual({ setting: "sign-ins", notices: [] });
  expect(read({ FENCELINE_DEMO: "off" })).toEqual({ setting: "off", notices: [] });
  expect(read({})).toEqual({ setting: "on", notices: [] });
  expect(read({}, "off")).toEqual({ setting: "off", notices: [] });
});

test("anything else is refused, naming the values", () => {
  expect(() => read({ FENCELINE_DEMO: "yes" })).toThrow(SettingError);
  expect(() => read({ FENCELINE_DEMO: "yes" })).toThrow('FENCELINE_DEMO must be on, sign-ins or off, got "yes"');
});

test("the old names are read as they meant, each with a one-line notice", () => {
  expect(read({ FENCELINE_DEMO: "0" })).toEqual({ setting: "sign-ins", notices: ["FENCELINE_DEMO=0 is deprecated: read as FENCELINE_DEMO=sign-ins (on, sign-ins or off)"] });
  expect(read({ FENCELINE_DEMO: "1" }).setting).toBe("on");
  expect(read({ FENCELINE_MODE: "demo" })).toEqual({ setting: "on", notices: ["FENCELINE_MODE=demo is deprecated: read as FENCELINE_DEMO=on (on, sign-ins or off)"] });
  expect(read({ FENCELINE_MODE: "production" }).setting).toBe("off");
  expect(read({ FENCELINE_MODE: "production", FENCELINE_DEMO: "0" }).setting).toBe("off");
  expect(read({ FENCELINE_MODE: "demo", FENCELINE_DEMO: "0" }).setting).toBe("sign-ins");
  expect(read({ FENCELINE_MODE: "production", FENCELINE_DEMO: "on" })).toEqual({ setting: "on", notices: ["FENCELINE_MODE is deprecated and ignored beside FENCELINE_DEMO=on"] });
});

afterEach(() => {
  delete process.env.FENCELINE_DEMO;
  delete process.env.FENCELINE_DESTINATION_URL;
});

test("the web app is in demo mode only when told, and only with the destination", () => {
  process.env.FENCELINE_DESTINATION_URL = "http://127.0.0.1:4100";
  expect(demoMode()).toBeNull();
  process.env.FENCELINE_DEMO = "sign-ins";
  expect(demoMode()).toEqual({ destinationUrl: "http://127.0.0.1:4100" });
  process.env.FENCELINE_DEMO = "off";
  expect(demoMode()).toBeNull();
  delete process.env.FENCELINE_DESTINATION_URL;
  process.env.FENCELINE_DEMO = "on";
  expect(demoMode()).toBeNull();
});
