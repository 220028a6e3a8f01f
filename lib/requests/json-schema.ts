/**
 * JSON Schema validation of what the server receives on behalf of a definition: a request's input
 * against its workflow version's schema, an event's payload against the schemas of the steps that
 * wait for it. One Ajv, compiled validators cached per schema, and its errors in field words.
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020";
import type { InputIssue } from "@/lib/engine/errors";

const ajv = new Ajv2020({ allErrors: true, useDefaults: true, strict: false });

/** Compiled validators by key; a registered schema never changes once stored. */
const validators = new Map<string, ValidateFunction>();
const MAX_CACHED_VALIDATORS = 500;

/** The validator of `schema`, compiled once per `key` (e.g. `kind@version`). */
export function validatorFor(key: string, schema: Record<string, unknown>): ValidateFunction {
  let validate = validators.get(key);
  if (!validate) {
    if (validators.size >= MAX_CACHED_VALIDATORS) validators.delete(validators.keys().next().value!);
    validate = ajv.compile(schema);
    validators.set(key, validate);
  }
  return validate;
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
  return { path: path.join("."), message: error.message ?? `fails ${error.keyword}` };
}
