import { expect, test } from "./fixtures";

// The browser enforces the app's Content-Security-Policy (proxy.ts): markup without this
// response's nonce cannot run script, the refusal reaches the watcher every test relies on
// (e2e/fixtures.ts), and no other site can frame a page.

test("markup injected into a page cannot run script, and the watcher sees both refusals", async ({ page, cspViolations }) => {
  // As if the server had rendered an attacker's text unescaped: a script tag and an inline
  // handler, neither carrying the nonce. (A script the page's own code creates is trusted
  // through 'strict-dynamic'; markup is the way in that the policy closes.)
  await page.route("**/login", async (route) => {
    const response = await route.fetch();
    const injected = `<script>window.injected = "script"</script><img alt="" src="/csp-probe.png" onerror="window.injected = 'handler'">`;
    await route.fulfill({ response, body: (await response.text()).replace("</body>", `${injected}</body>`) });
  });
  const response = await page.goto("/login");
  const headers = response!.headers();
  expect(headers["content-security-policy"]).toContain("'strict-dynamic'");
  expect(headers["content-security-policy-report-only"]).toBeUndefined();
  // The app's own scripts still run: the form is hydrated and shows the API's refusal.
  await page.getByLabel("Email").fill("nobody@fenceline.test");
  await page.getByLabel("Password").fill("not-the-password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByText(/^Sign-in refused:/)).toBeVisible();

  await expect.poll(() => cspViolations.map((violation) => violation.directive).sort()).toEqual(["script-src-attr", "script-src-elem"]);
  expect(await page.evaluate(() => (window as unknown as { injected?: string }).injected)).toBeUndefined();
  // Expected here; in any other test a violation fails it.
  cspViolations.length = 0;
});

test("another site cannot frame a page", async ({ page, baseURL }) => {
  // setContent returns once the document and its frame have loaded, refused or not.
  await page.setContent(`<iframe title="framed" src="${baseURL}/login"></iframe>`);
  // Chromium replaces a refused frame with its own error document: the app's page never appears.
  await expect(page.frameLocator("iframe").getByRole("heading", { name: "Fenceline staff sign-in" })).toHaveCount(0);
  expect(page.frames()[1]?.url()).not.toBe(`${baseURL}/login`);
});
