/**
 * Vitest global setup: finds the PostgreSQL server (DATABASE_URL's, else the embedded cluster),
 * brings the template database up to date, and hands the server's URL to the test files.
 */
import type { TestProject } from "vitest/node";
import { resolveDatabaseUrl } from "./database";
import { prepareTemplate } from "./test-template";

declare module "vitest" {
  export interface ProvidedContext {
    /** URL of the server's `postgres` database. */
    databaseServerUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await resolveDatabaseUrl({ database: "postgres" });
  try {
    await prepareTemplate(server.url);
  } catch (error) {
    await server.stop();
    throw error;
  }
  project.provide("databaseServerUrl", server.url);
  return () => server.stop();
}
