import { defineConfig } from "prisma/config";

// url stays optional: `prisma generate` runs in postinstall on a fresh clone, before any database
// exists, and Prisma's env() helper would throw there. Migrations go through lib/db/migrate.mjs.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL },
});
