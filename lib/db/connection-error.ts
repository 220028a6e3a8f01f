/**
 * Telling "PostgreSQL cannot be reached or refuses us" from other failures. Such an error is an
 * operating condition (a server down, a wrong host, port or password), not a bug: commands report
 * it in one sentence instead of a stack trace.
 */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "ETIMEDOUT", "ECONNRESET", "EPIPE"]);
// SQLSTATE classes 08 (connection exception) and 28 (invalid authorization); 3D000: no such
// database; 57P01–57P03: the server is shutting down, restarting or not yet accepting.
const SQLSTATE = /^(08|28)|^3D000$|^57P0[123]$/;
// node-postgres raises these without a code.
const DRIVER_MESSAGES = /^(timeout expired|Connection terminated (unexpectedly|due to connection timeout))$/;

/** What went wrong, in a few words, when `error` says PostgreSQL could not be reached or refused us; otherwise undefined. */
export function connectionProblem(error: unknown): string | undefined {
  // A host name with several addresses fails with one error per address.
  const first = error instanceof AggregateError && error.errors.length > 0 ? error.errors[0] : error;
  if (!(first instanceof Error)) return undefined;
  const code = (first as { code?: unknown }).code;
  if (typeof code === "string" && (NETWORK_CODES.has(code) || SQLSTATE.test(code))) return first.message || code;
  if (DRIVER_MESSAGES.test(first.message)) return first.message;
  return undefined;
}
