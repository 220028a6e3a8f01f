/**
 * A definition that cannot work as written: a workflow or adapter refused when it is defined, so
 * the mistake surfaces in the adopter's own process, at start, naming what to change.
 */
export class DefinitionError extends Error {
  readonly code = "invalid_definition";
  constructor(
    /** What is being defined: `workflow checkout@1`, `adapter payments@1`. */
    readonly subject: string,
    readonly problems: readonly string[],
  ) {
    super(`${subject}: ${problems.join("; ")}`);
    this.name = "DefinitionError";
  }
}
