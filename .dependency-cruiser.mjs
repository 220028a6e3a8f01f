/**
 * The layering the code keeps, as dependency-cruiser rules. lib/layering.test.ts checks them on
 * every test run; `npm run layers` shows the same from the command line. Type-only imports count:
 * knowing a type is knowing the module.
 */

/** What the engine must not know: the console (audit log, staff auth, HTTP edge, pages, UI) and the demo. */
const ABOVE_THE_ENGINE = ["^lib/audit/", "^lib/auth/", "^lib/api/", "^app/", "^components/", "^lib/demo/"];

/** The demo is written like an adopter's code, against the public doors and never into the engine. */
const DEMO_ON_THE_DOORS = ["^lib/demo/"];

export default {
  forbidden: [
    {
      name: "engine-knows-no-console",
      comment: "lib/engine is the coordinator: the console and the demo call it, never the other way round (a hook the caller supplies instead).",
      severity: "error",
      from: { path: "^lib/engine/" },
      to: { path: ABOVE_THE_ENGINE },
    },
    {
      name: "demo-uses-the-doors",
      comment: "The demo is a user of Fenceline like any adopter: it reaches the engine through the public doors only.",
      severity: "error",
      // Its tests drive it in-process, as a test of anyone's workflow may.
      from: { path: DEMO_ON_THE_DOORS, pathNot: "\\.test\\.ts$" },
      to: { path: "^lib/engine/" },
    },
    {
      name: "bench-peers-through-one-module",
      comment: "The engines the bench runs beside Fenceline are a package of their own, installed on first need: lib/bench/peers is the only way to them.",
      severity: "error",
      from: { path: "^(lib|app|components|e2e)/", pathNot: "^lib/bench/peers/" },
      to: { path: "(^|/)(graphile-worker|pg-boss|@dbos-inc/dbos-sdk)(/|$)" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: ["^lib/generated/", "^\\.next/"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
  },
};
