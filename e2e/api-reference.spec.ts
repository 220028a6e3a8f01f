import { expect, test } from "./fixtures";

// The HTTP API's reference page renders every operation of the OpenAPI document the app serves,
// signed out, under the app's Content-Security-Policy (a violation fails the test), and every
// link it shows that leaves the page resolves.

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"];

test("/reference/api renders every operation of /api/openapi.json, and its links resolve", async ({ page, request }) => {
  const document = (await (await request.get("/api/openapi.json")).json()) as { paths: Record<string, Record<string, unknown>> };
  const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).filter((key) => METHODS.includes(key)).map((method) => `${method.toUpperCase()} ${path}`));
  expect(operations.length).toBeGreaterThan(10);

  await page.goto("/reference/api");
  // Swagger UI renders one block per operation, each showing its method and path.
  const blocks = page.locator(".opblock-summary");
  await expect(blocks.first()).toBeVisible();
  await expect(blocks).toHaveCount(operations.length);
  const shown = await blocks.evaluateAll((nodes) =>
    nodes.map((node) => `${node.querySelector(".opblock-summary-method")?.textContent?.trim()} ${node.querySelector(".opblock-summary-path")?.getAttribute("data-path")}`),
  );
  expect(shown.sort()).toEqual(operations.sort());

  const links = await page.locator("a[href]").evaluateAll((anchors) => anchors.map((anchor) => (anchor as HTMLAnchorElement).href));
  const leaving = [...new Set(links.filter((href) => !href.includes("#")))];
  for (const href of leaving) {
    if (!href.startsWith(new URL(page.url()).origin)) continue; // the document links nowhere else; web links are not fetched
    expect((await request.get(href)).status(), href).toBeLessThan(400);
  }
});

test("the reference's assets come from this app, with their types", async ({ request }) => {
  const script = await request.get("/reference/api/swagger-ui-bundle.js");
  expect([script.status(), script.headers()["content-type"]]).toEqual([200, "text/javascript; charset=utf-8"]);
  expect((await request.get("/reference/api/swagger-ui.css")).headers()["content-type"]).toBe("text/css; charset=utf-8");
  expect((await request.get("/reference/api/index.html")).status()).toBe(404);
});
