/** GET/POST /api/admin/accounts — staff accounts and their roles (admins). */
import { accountListSchema, accountSchema, createAccountBody } from "@/lib/api/contract/staff";
import { handle, json, readJson } from "@/lib/api/http";
import { createAccount, listAccounts } from "@/lib/auth/accounts";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { pool, prisma } from "@/lib/db/pool";

export const dynamic = "force-dynamic";

export const GET = handle(async (request) => {
  await authorize(request, "accounts:manage");
  return json(accountListSchema, { items: await listAccounts(prisma()) });
});

export const POST = handle(async (request) => {
  const admin = await authorize(request, "accounts:manage");
  const body = await readJson(request, createAccountBody);
  return json(accountSchema, await createAccount(pool(), body, actorName(admin)), { status: 201 });
});
