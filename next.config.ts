import path from "node:path";
import type { NextConfig } from "next";

// Next has no config switch for telemetry, only this variable. `next build` reads it after
// loading this file; npm start and CI also set it for every process.
process.env.NEXT_TELEMETRY_DISABLED ??= "1";

// `npm run package` builds the dashboard package (fenceline-dashboard) with FENCELINE_STANDALONE=1:
// a self-contained server in its own distDir, so `npm start`'s .next build is left alone
// (docs/decisions/018). Its own tsconfig, because next build adds its distDir's types to the
// tsconfig it uses.
const standalone = process.env.FENCELINE_STANDALONE === "1";

const nextConfig: NextConfig = {
  typedRoutes: true,
  // Says nothing a visitor needs; the other response headers are set in proxy.ts.
  poweredByHeader: false,
  // forbidden() renders app/forbidden.tsx with a 403 when a signed-in person lacks the role (lib/auth/page.ts).
  experimental: { authInterrupts: true },
  // `npm test` type-checks the whole repository (npm run typecheck) before anything ships; the
  // build's own pass repeated it and was a third of a first start's build (docs/operating/first-start.md).
  typescript: { ignoreBuildErrors: true, ...(standalone ? { tsconfigPath: "tsconfig.dashboard.json" } : {}) },
  ...(standalone
    ? {
        output: "standalone",
        distDir: ".next-standalone",
        outputFileTracingRoot: path.dirname(new URL(import.meta.url).pathname),
        // No page uses next/image: leaving out sharp's platform binaries (19 MB) keeps the
        // package small and the same on every platform.
        images: { unoptimized: true },
        outputFileTracingExcludes: { "*": ["node_modules/sharp/**", "node_modules/@img/**"] },
        // Read from disk by the HTTP API's page (lib/web/api-reference.ts), so not traced by imports.
        outputFileTracingIncludes: { "/reference/api/[asset]": ["./node_modules/swagger-ui-dist/swagger-ui-bundle.js", "./node_modules/swagger-ui-dist/swagger-ui.css"] },
      }
    : {}),
};

export default nextConfig;
