/**
 * The article before a kind reads as it is said: "An order request", "A refund request", never
 * "A order request" — vowels, the common exceptions (user, one, hour) and initialisms.
 */
import { expect, test } from "vitest";
import { articleFor, withArticle } from "./article";

test("a or an follows the sound, not only the letter", () => {
  const cases: [string, "a" | "an"][] = [
    ["order", "an"], ["refund", "a"], ["invoice", "an"], ["email-receipt", "an"], ["upgrade", "an"], ["user-signup", "a"],
    ["unicorn", "a"], ["one-off", "a"], ["euro-payout", "a"], ["hour-report", "an"], ["honest-quote", "an"], ["delivery", "a"],
    ["SMS", "an"], ["x-ray", "an"], ["HTTP-call", "an"], ["KYC", "a"], ["usage-report", "a"], ["umbrella", "an"], ["SHA-256", "a"], ["MD5", "an"], ["URL", "a"],
  ];
  expect(cases.map(([word]) => [word, articleFor(word)])).toEqual(cases);
  expect(withArticle("order", true)).toBe("An order");
  expect(withArticle("refund")).toBe("a refund");
});
