/** GET/POST /api/admin/app-keys — app keys for adopters' backends (admins); a new key is shown once. */
import { appKeyListSchema, createAppKeyBody, createdAppKeySchema } from "@/lib/api/contract/staff";
import { handle, json, readJson } from "@/lib/api/http";
import { createAppKey, listAppKeys } from "@/lib/auth/app-keys";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { pool, prisma } from "@/lib/db/pool";

export const dynamic = "force-dynamic";

export const GET = handle(async (request) => {
  await authorize(request, "app-keys:manage");
  return json(appKeyListSchema, { items: await listAppKeys(prisma()) });
});

export const POST = handle(async (request) => {
  const admin = await authorize(request, "app-keys:manage");
  const { app, scopes, kinds } = await readJson(request, createAppKeyBody);
  return json(createdAppKeySchema, await createAppKey(pool(), app, scopes, actorName(admin), { kinds }), { status: 201 });
});
