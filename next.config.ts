import type { NextConfig } from "next";

// Next has no config switch for telemetry, only this variable. `next build` reads it after
// loading this file; npm start and CI also set it for every process.
process.env.NEXT_TELEMETRY_DISABLED ??= "1";

const nextConfig: NextConfig = {
  typedRoutes: true,
  // Says nothing a visitor needs; the other response headers are set in proxy.ts.
  poweredByHeader: false,
  // forbidden() renders app/forbidden.tsx with a 403 when a signed-in person lacks the role (lib/auth/page.ts).
  experimental: { authInterrupts: true },
};

export default nextConfig;
