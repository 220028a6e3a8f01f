/** /api/session — sign in (POST), who am I (GET), sign out (DELETE). */
import { signInBody, staffSchema } from "@/lib/api/contract/staff";
import { handle, json, readJson } from "@/lib/api/http";
import { HttpProblem } from "@/lib/api/problems";
import { signIn, signOut } from "@/lib/auth/session";
import { staffFromHeaders } from "@/lib/auth/staff";
import { prisma } from "@/lib/db/pool";

export const dynamic = "force-dynamic";

const withCookies = (response: Response, setCookie: readonly string[]) => {
  for (const cookie of setCookie) response.headers.append("set-cookie", cookie);
  return response;
};

export const POST = handle(async (request) => {
  const { staff, setCookie } = await signIn(request, await readJson(request, signInBody));
  return withCookies(json(staffSchema, staff), setCookie);
});

export const GET = handle(async (request) => {
  const staff = await staffFromHeaders(prisma(), request.headers);
  if (!staff) throw new HttpProblem("unauthorized", "not signed in");
  return json(staffSchema, staff);
});

export const DELETE = handle(async (request) => withCookies(new Response(null, { status: 204 }), await signOut(request)));
