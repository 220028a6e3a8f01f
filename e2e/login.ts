/**
 * Staff sign-in for browser tests. The web server is `npm start` in demo mode, which seeds one
 * account per role with the password playwright.config.ts fixes (FENCELINE_DEMO_PASSWORD).
 */
import { expect, type APIRequestContext, type Page } from "@playwright/test";

export const DEMO_PASSWORD = "e2e-demo-password-0123";
export type DemoRole = "support" | "engineer" | "admin";
export const demoEmail = (role: DemoRole) => `${role}@fenceline.test`;

/** Signs a page's browser context or an API context in; the session cookie stays with it. */
export async function signInAs(target: Page | APIRequestContext, role: DemoRole): Promise<void> {
  const request = "request" in target ? target.request : target;
  const response = await request.post("/api/session", { data: { email: demoEmail(role), password: DEMO_PASSWORD } });
  expect(response.status(), await response.text()).toBe(200);
}
