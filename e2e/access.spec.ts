import { expect, test } from "./fixtures";
import { createDelivery } from "./requests";
import { demoEmail, DEMO_PASSWORD, signInAs } from "./login";

// Who may do what, through the pages and the API: staff pages send a visitor to /login and back,
// each role is refused what it may not do (403 page, 403 problem), an API call without a session
// is a 401 problem, and an end user reaches only their own request through its token.

const UUID = "00000000-0000-4000-8000-000000000000";

test("a visitor signs in through /login, returns to the page they asked for, and signs out", async ({ page }) => {
  await page.goto("/review");
  await expect(page).toHaveURL(/\/login\?next=%2Freview$/);
  await page.getByLabel("Email").fill(demoEmail("support"));
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.locator("#sign-in-error")).toContainText("the email or the password is wrong");
  await page.getByLabel("Password").fill(DEMO_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/review$/);
  await expect(page.getByTestId("signed-in-as")).toContainText(demoEmail("support"));
  await expect(page.getByRole("navigation", { name: "Staff" }).getByRole("link")).toHaveText(["Review queue"]);
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login$/);
  await page.goto("/review");
  await expect(page).toHaveURL(/\/login\?next=/);
});

test("support is refused the engineers' pages and API, and cannot revoke a lease", async ({ page }) => {
  await signInAs(page, "support");
  for (const path of ["/steps", "/requests", "/metrics", "/workers", "/audit", "/admin"]) {
    const response = await page.goto(path);
    expect(response?.status(), path).toBe(403);
    await expect(page.getByRole("heading", { name: "Not for your role" })).toBeVisible();
  }
  for (const path of ["/api/steps", "/api/requests", "/api/metrics", "/api/workers", "/api/audit", "/api/admin/accounts"]) {
    const response = await page.request.get(path);
    expect(response.status(), path).toBe(403);
    expect(response.headers()["content-type"]).toBe("application/problem+json");
  }
  const revoke = await page.request.post(`/api/steps/${UUID}/revoke`, { data: { reason: "curious" } });
  expect(revoke.status()).toBe(403);
});

test("an engineer cannot resolve a case or manage accounts; an admin cannot resolve either", async ({ page, newPage }) => {
  await signInAs(page, "engineer");
  const resolve = await page.request.post(`/api/review/${UUID}/resolution`, { data: { resolution: "abandon", version: 1, note: "", customerReason: "x" } });
  expect(resolve.status()).toBe(403);
  expect(await resolve.json()).toMatchObject({ detail: expect.stringContaining("support") });
  expect((await page.request.get("/api/admin/accounts")).status()).toBe(403);
  expect((await page.goto("/admin"))?.status()).toBe(403);
  expect((await page.goto("/review"))?.status()).toBe(200);

  const admin = await newPage();
  await signInAs(admin, "admin");
  expect((await admin.request.post(`/api/review/${UUID}/resolution`, { data: { resolution: "abandon", version: 1, note: "", customerReason: "x" } })).status()).toBe(403);
  expect((await admin.goto("/review"))?.status()).toBe(403);
  await admin.close();
});

test("without a session the staff API is a 401 problem; a cross-site sign-in is refused", async ({ request }) => {
  for (const path of ["/api/review", "/api/steps", `/api/steps/${UUID}`, "/api/requests", "/api/workers", "/api/audit"]) {
    const response = await request.get(path);
    expect(response.status(), path).toBe(401);
    expect(response.headers()["content-type"]).toBe("application/problem+json");
  }
  const crossSite = await request.post("/api/session", { headers: { origin: "https://evil.example" }, data: { email: demoEmail("admin"), password: DEMO_PASSWORD } });
  expect(crossSite.status()).toBe(403);
});

test("an end user reaches only their own request: another token, or a guessed one, shows nothing", async ({ request }) => {
  const mine = (await (await createDelivery(request, { recipient: "me@example.test", message: "mine" })).json()) as { trackingToken: string; id: string };
  const theirs = (await (await createDelivery(request, { recipient: "them@example.test", message: "theirs" })).json()) as { trackingToken: string; id: string };
  const own = await request.get(`/api/track/${mine.trackingToken}`);
  expect(own.status()).toBe(200);
  const text = await own.text();
  expect(text).not.toContain(theirs.id);
  expect(text).not.toContain(theirs.trackingToken);
  // One character off is a different, unknown token: the same 404 as any other.
  const last = mine.trackingToken.at(-1) === "A" ? "B" : "A";
  const guessed = await request.get(`/api/track/${mine.trackingToken.slice(0, -1)}${last}`);
  expect(guessed.status()).toBe(404);
  // Listing requests (with their tokens) is staff-only.
  expect((await request.get("/api/requests")).status()).toBe(401);
});

test("an admin creates an app key on /admin, a backend reads its request with it, and a revoked key is refused at once", async ({ page, request }) => {
  await signInAs(page, "admin");
  await page.goto("/admin");
  const app = `shop-${Date.now()}`;
  await page.getByLabel("App name").fill(app);
  await page.getByRole("button", { name: "Create app key" }).click();
  const key = (await page.getByTestId("new-app-key").textContent())!;
  expect(key).toMatch(/^fl_app_/);
  await expect(page.getByRole("status")).toHaveText("App key created: copy it now, it is not shown again.");

  const authorization = { authorization: `Bearer ${key}` };
  await expect(async () => {
    const created = await request.post("/api/requests", { headers: authorization, data: { kind: "delivery", input: { recipient: "ada@example.test", message: "from a backend" } } });
    expect(created.status()).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect((await request.get(`/api/requests/${id}`, { headers: authorization })).status()).toBe(200);
  }).toPass({ timeout: 30_000 });

  await page.getByRole("button", { name: new RegExp(`^Revoke key \\d+ of ${app}$`) }).click();
  await expect(page.getByRole("status")).toContainText(`of ${app} revoked.`);
  const refused = await request.post("/api/requests", { headers: authorization, data: { kind: "delivery", input: { recipient: "ada@example.test", message: "again" } } });
  expect(refused.status()).toBe(401);
  expect(refused.headers()["content-type"]).toBe("application/problem+json");
});
