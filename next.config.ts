import type { NextConfig } from "next";

// Next has no config switch for telemetry, only this variable. `next build` reads it after
// loading this file; npm start and CI also set it for every process.
process.env.NEXT_TELEMETRY_DISABLED ??= "1";

const nextConfig: NextConfig = {
  typedRoutes: true,
};

export default nextConfig;
