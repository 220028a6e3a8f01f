/**
 * The string formats zod names in the JSON Schema it emits, each with how the server checks it and
 * the words a refusal uses. zod adds a pattern beside most formats, which Ajv checks as well; a
 * format checked here is one zod emits without a pattern (`uri`, `jwt`), or one whose pattern
 * alone is enough (then the check accepts, and the pattern decides).
 */
import { withArticle } from "@/lib/review/article";

/** What a field of the format must be, in words: "must be an e-mail address". */
const WORDS: Readonly<Record<string, string>> = {
  email: "must be an e-mail address",
  uri: "must be a URL",
  url: "must be a URL",
  uuid: "must be a UUID",
  guid: "must be a UUID",
  "date-time": "must be a date and time in ISO 8601 (e.g. 2026-12-02T09:30:00Z)",
  date: "must be a date in ISO 8601 (YYYY-MM-DD)",
  time: "must be a time of day in ISO 8601 (HH:MM or HH:MM:SS)",
  duration: "must be a duration in ISO 8601 (e.g. P3D or PT2H30M)",
  ipv4: "must be an IPv4 address",
  ipv6: "must be an IPv6 address",
  cidrv4: "must be an IPv4 range in CIDR notation (e.g. 10.0.0.0/8)",
  cidrv6: "must be an IPv6 range in CIDR notation (e.g. 2001:db8::/32)",
  mac: "must be a MAC address",
  hostname: "must be a host name",
  e164: "must be a phone number in international form (E.164, e.g. +14155550123)",
  base64: "must be base64-encoded",
  base64url: "must be base64url-encoded",
  hex: "must be hexadecimal",
  jwt: "must be a JSON Web Token",
  emoji: "must be an emoji",
  nanoid: "must be a Nano ID",
  cuid: "must be a CUID",
  cuid2: "must be a CUID2",
  ulid: "must be a ULID",
  xid: "must be an XID",
  ksuid: "must be a KSUID",
  lowercase: "must be in lower case",
  uppercase: "must be in upper case",
};

const HASHES = ["md5", "sha1", "sha256", "sha384", "sha512"] as const;
const HASH_ENCODINGS = { hex: "in hex", base64: "in base64", base64url: "in base64url" } as const;

/** Every format zod emits that the server knows by name. */
export const KNOWN_FORMATS: readonly string[] = [
  ...Object.keys(WORDS),
  ...HASHES.flatMap((hash) => Object.keys(HASH_ENCODINGS).map((encoding) => `${hash}_${encoding}`)),
  "starts_with",
  "ends_with",
  "includes",
  "regex",
];

const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** How Ajv checks a format: a function for the ones zod gives no pattern, `true` (its pattern decides) for the rest. */
export function formatCheck(format: string): true | ((value: string) => boolean) {
  if (format === "uri" || format === "url") return isUrl;
  if (format === "jwt") return (value) => JWT.test(value);
  return true;
}

function isUrl(value: string): boolean {
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/** A regex's literal text back from its escaped form (zod escapes a prefix or suffix it matches). */
const literalOf = (escaped: string): string => escaped.replace(/\\(.)/g, "$1");

/**
 * The words for a value that fails `format`; `pattern` (the regex it failed, when zod gave one)
 * says what a `starts_with`, `ends_with` or `includes` asks for.
 */
export function formatWords(format: string, pattern: string | null): string {
  const known = WORDS[format];
  if (known) return known;
  const hash = /^(md5|sha1|sha256|sha384|sha512)_(hex|base64|base64url)$/.exec(format);
  if (hash) return `must be ${withArticle(hash[1]!.toUpperCase().replace(/^SHA(\d)/, "SHA-$1"))} hash ${HASH_ENCODINGS[hash[2] as keyof typeof HASH_ENCODINGS]}`;
  if (format === "starts_with" && pattern?.startsWith("^") && pattern.endsWith(".*")) return `must start with ${JSON.stringify(literalOf(pattern.slice(1, -2)))}`;
  if (format === "ends_with" && pattern?.startsWith(".*") && pattern.endsWith("$")) return `must end with ${JSON.stringify(literalOf(pattern.slice(2, -1)))}`;
  if (format === "includes" && pattern !== null) return `must include ${JSON.stringify(literalOf(pattern))}`;
  return `must be ${withArticle(`valid ${format.replaceAll("_", " ")}`)}`;
}

/** Every `format` a JSON Schema names, at any depth. */
export function formatsIn(schema: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const item of schema) formatsIn(item, found);
  else if (schema !== null && typeof schema === "object") {
    for (const [key, value] of Object.entries(schema)) {
      if (key === "format" && typeof value === "string") found.add(value);
      else formatsIn(value, found);
    }
  }
  return found;
}
