/**
 * The same authorisation for staff pages: no session redirects to /login (and back afterwards),
 * a missing permission renders the 403 page (app/forbidden.tsx).
 */
import type { Route } from "next";
import { forbidden, redirect } from "next/navigation";
import { headers } from "next/headers";
import { prisma } from "@/lib/db/pool";
import { may, type Permission } from "./roles";
import { staffFromHeaders, type Staff } from "./staff";

export async function currentStaff(): Promise<Staff | null> {
  return staffFromHeaders(prisma(), await headers());
}

export async function authorizePage(permission: Permission, path: string): Promise<Staff> {
  const staff = await currentStaff();
  if (!staff) redirect(`/login?next=${encodeURIComponent(path)}` as Route);
  if (!may(staff.roles, permission)) forbidden();
  return staff;
}
