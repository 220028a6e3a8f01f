/**
 * A path is readable exactly when Next can decode each of its segments: any text percent-encoded
 * as a browser would is readable, and a segment cut inside an escape or holding bytes that are
 * not UTF-8 is found and named, shortened.
 */
import fc from "fast-check";
import { expect, test } from "vitest";
import { describeUnreadableSegment, unreadableSegment } from "./readable-path";

const text = fc.string({ unit: "grapheme", maxLength: 20 });

test("a path of encoded text is readable", () => {
  fc.assert(
    fc.property(fc.array(text, { maxLength: 5 }), (segments) => {
      expect(unreadableSegment(`/${segments.map(encodeURIComponent).join("/")}`)).toBeUndefined();
    }),
  );
});

test("a segment cut inside an escape, or not UTF-8, is the one named", () => {
  const broken = fc.oneof(
    text.map((prefix) => `${encodeURIComponent(prefix)}%`),
    text.map((prefix) => `${encodeURIComponent(prefix)}%E2%82`),
    fc.constantFrom("%zz", "%ED%A0%80", "%C0%AF", "%FF", "%E0%A4%A"),
  );
  fc.assert(
    fc.property(fc.array(text, { maxLength: 3 }), broken, fc.array(text, { maxLength: 3 }), (before, bad, after) => {
      const segments = [...before.map(encodeURIComponent), bad, ...after.map(encodeURIComponent)];
      expect(unreadableSegment(`/${segments.join("/")}`)).toBe(bad);
    }),
  );
});

test("the description quotes a long segment only in part", () => {
  const description = describeUnreadableSegment(`${"a".repeat(5_000)}%`);
  expect(description.length).toBeLessThan(200);
  expect(description).toContain("aaaa…");
});
