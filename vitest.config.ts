import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { tsconfigPaths: true },
  test: {
    include: ["lib/**/*.test.ts"],
    globalSetup: ["lib/db/test-setup.ts"],
    // Two cores: two test files at a time, each with its own database.
    fileParallelism: true,
    maxWorkers: 2,
    // Database tests start servers, clone databases and wait on lease expiry.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
