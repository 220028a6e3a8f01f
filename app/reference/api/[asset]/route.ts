/** GET /reference/api/<asset> — Swagger UI's script and stylesheet, from swagger-ui-dist. */
import { apiReferenceAsset } from "@/lib/web/api-reference";

export async function GET(_request: Request, { params }: { params: Promise<{ asset: string }> }): Promise<Response> {
  return apiReferenceAsset((await params).asset);
}
