/**
 * POST /api/worker/<operation> — the HTTP worker protocol (lib/api/worker-protocol.ts): the
 * coordinator's operations for workers on other machines, with a worker bearer token.
 */
import { handle } from "@/lib/api/http";
import { handleWorkerProtocol } from "@/lib/api/worker-protocol";
import { pool } from "@/lib/db/pool";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const POST = handle<{ operation: string }>(async (request) => handleWorkerProtocol(request, pool()));
