/**
 * The `test` every spec uses (playwright.config.ts refuses a spec that takes it elsewhere). It
 * fails a test on any Content-Security-Policy violation a page of it reported: the app runs
 * with its policy enforced (proxy.ts), so a violation is something that did not load or run.
 *
 * `newPage` opens another person's browser (a context of its own, watched the same way), for
 * tests where two people act on the same thing.
 */
import { test as base, expect, type BrowserContext, type Page } from "@playwright/test";

export { expect } from "@playwright/test";
export type { APIRequestContext, Page } from "@playwright/test";

export interface CspViolation {
  readonly page: string;
  readonly directive: string;
  readonly blocked: string;
  readonly sample: string;
  readonly source: string;
}

declare global {
  interface Window {
    reportCspViolation(violation: CspViolation): Promise<void>;
  }
}

async function watch(context: BrowserContext, violations: CspViolation[]): Promise<void> {
  await context.exposeFunction("reportCspViolation", (violation: CspViolation) => {
    violations.push(violation);
  });
  // Runs before any script of the page, so violations while the document loads count too.
  await context.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      void window.reportCspViolation({
        page: location.href,
        directive: event.effectiveDirective,
        blocked: event.blockedURI,
        sample: event.sample,
        source: `${event.sourceFile}:${event.lineNumber}:${event.columnNumber}`,
      });
    });
  });
}

export const test = base.extend<{ cspViolations: CspViolation[]; newPage: () => Promise<Page> }>({
  cspViolations: [
    async ({ context }, use) => {
      const violations: CspViolation[] = [];
      await watch(context, violations);
      await use(violations);
      expect(violations, "the browser reported Content-Security-Policy violations").toEqual([]);
    },
    { auto: true },
  ],
  newPage: async ({ browser, baseURL, cspViolations }, use) => {
    const contexts: BrowserContext[] = [];
    await use(async () => {
      const context = await browser.newContext({ baseURL });
      contexts.push(context);
      await watch(context, cspViolations);
      return context.newPage();
    });
    for (const context of contexts) await context.close();
  },
});
