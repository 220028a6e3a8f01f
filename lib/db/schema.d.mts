// Types for schema.mjs, which stays plain JavaScript so lib/db/migrate.mjs needs no build.

export const DEFAULT_ENGINE_SCHEMA: "fenceline";
export function checkSchemaName(name: string, source?: string): string;
export function engineSchema(env?: Record<string, string | undefined>): string;
export function searchPathOption(schema: string): string;
