/**
 * Every mutating staff route refuses a state-changing request sent by another site's page, and
 * accept one from this origin or from a client that is not a browser (no Origin, no Sec-Fetch-Site).
 */
import { describe, expect, test } from "vitest";
import { PermissionDeniedError } from "./errors";
import { refuseCrossSite } from "./origin";

const request = (headers: Record<string, string>) => new Request("http://127.0.0.1:3000/api/lab/faults", { method: "PUT", headers });

describe("refuseCrossSite", () => {
  test("accepts same-origin browsers and non-browser clients", () => {
    expect(() => refuseCrossSite(request({}))).not.toThrow();
    expect(() => refuseCrossSite(request({ "sec-fetch-site": "same-origin", origin: "http://127.0.0.1:3000" }))).not.toThrow();
    expect(() => refuseCrossSite(request({ "sec-fetch-site": "none" }))).not.toThrow();
  });

  test("refuses another site, by Sec-Fetch-Site or by Origin, as a denied permission", () => {
    expect(() => refuseCrossSite(request({ "sec-fetch-site": "cross-site" }))).toThrow(PermissionDeniedError);
    expect(() => refuseCrossSite(request({ "sec-fetch-site": "same-site" }))).toThrow(PermissionDeniedError);
    expect(() => refuseCrossSite(request({ origin: "https://evil.example" }))).toThrow(PermissionDeniedError);
  });
});
