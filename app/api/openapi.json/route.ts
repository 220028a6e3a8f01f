import { openApiDocument } from "@/lib/api/openapi";

export const dynamic = "force-static";

export function GET(): Response {
  return Response.json(openApiDocument());
}
