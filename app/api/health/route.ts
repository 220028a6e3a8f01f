import { problem } from "@/lib/api/problems";
import { pool } from "@/lib/db/pool";

// Answers per request: a cached health check would report a database that is gone.
export const dynamic = "force-dynamic";

export async function GET(): Promise<Response> {
  try {
    await pool().query("SELECT 1");
    return Response.json({ status: "ok", database: "up" });
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return problem("database-unavailable", detail);
  }
}
