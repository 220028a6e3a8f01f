/**
 * Any /api path that no route serves (a mistyped operation, a path with `..` resolved away):
 * a 404 problem, as every other API refusal is, not the HTML not-found page. Any more specific
 * route wins over this one.
 */
import { problem } from "@/lib/api/problems";

const noOperation = async () => problem("not-found", "no API operation at this path; GET /api/openapi.json lists them");

export const GET = noOperation;
export const POST = noOperation;
export const PUT = noOperation;
export const PATCH = noOperation;
export const DELETE = noOperation;
