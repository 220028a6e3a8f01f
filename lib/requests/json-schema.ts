/**
 * JSON Schema validation of what the server receives on behalf of a definition: a request's input
 * against its workflow version's schema, an event's payload against the schemas of the steps that
 * wait for it. One Ajv, compiled validators cached per schema, and its errors in field words.
 *
 * The schemas come from zod (`z.toJSONSchema`), which names a string format (`email`, `uri`,
 * `uuid`, `date-time`…) and, for most, adds the pattern that checks it. Ajv knows every format zod
 * emits (./formats.ts), so none is "unknown … ignored", and a field that fails one is told so in
 * words ("must be an e-mail address"), never with the regex.
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import type { InputIssue } from "@/lib/engine/errors";
import { formatCheck, formatWords, formatsIn, KNOWN_FORMATS } from "./formats";

// verbose: each error carries the schema it failed, so a pattern error can be read as its format.
const ajv = new Ajv2020({ allErrors: true, useDefaults: true, strict: false, verbose: true });
for (const format of KNOWN_FORMATS) ajv.addFormat(format, formatCheck(format));

/** Compiled validators by key; a registered schema never changes once stored. */
const validators = new Map<string, ValidateFunction>();
const MAX_CACHED_VALIDATORS = 500;

/** The validator of `schema`, compiled once per `key` (e.g. `kind@version`). */
export function validatorFor(key: string, schema: Record<string, unknown>): ValidateFunction {
  let validate = validators.get(key);
  if (!validate) {
    if (validators.size >= MAX_CACHED_VALIDATORS) validators.delete(validators.keys().next().value!);
    // A format this server does not know (a newer zod's): its pattern, when given, still checks it.
    for (const format of formatsIn(schema)) if (!ajv.formats[format]) ajv.addFormat(format, true);
    validate = ajv.compile(schema);
    validators.set(key, validate);
  }
  return validate;
}

/** The validation errors as issues, one per field and message, under `prefix` (e.g. `payload`). */
export function issuesOf(errors: readonly ErrorObject[] | null | undefined, prefix: readonly string[] = []): InputIssue[] {
  const seen = new Set<string>();
  return (errors ?? []).map((error) => issueOf(error, prefix)).filter((issue) => {
    const key = `${issue.path}\u0000${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** One validation error as a field and what is wrong with it, under `prefix` (e.g. `payload`). */
export function issueOf(error: ErrorObject, prefix: readonly string[] = []): InputIssue {
  const path = [...prefix, ...error.instancePath.split("/").slice(1).map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"))];
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "required") return { path: [...path, String(params.missingProperty)].join("."), message: "is required" };
  if (error.keyword === "additionalProperties") {
    return { path: [...path, String(params.additionalProperty)].join("."), message: "is not a field of this input" };
  }
  if (error.keyword === "enum") return { path: path.join("."), message: `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}` };
  if (error.keyword === "format") return { path: path.join("."), message: formatWords(String(params.format), null) };
  if (error.keyword === "pattern") {
    // zod gives a format's pattern beside the format: say what the format is, not the regex.
    const format = (error.parentSchema as { format?: unknown } | undefined)?.format;
    if (typeof format === "string") return { path: path.join("."), message: formatWords(format, String(params.pattern)) };
  }
  return { path: path.join("."), message: error.message ?? `fails ${error.keyword}` };
}
