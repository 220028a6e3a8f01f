/**
 * The requests list's "error reason" filter, shared by the list and bulk actions: a request
 * matches when the parameter (a plain substring, case-insensitive; %, _ and \ are literal)
 * is part of its status reason, or of the outcome reason of an attempt of one of its failed
 * steps (where the destination's or handler's own words are, e.g. "HTTP 500").
 */
export const endedWithReason = (param: string, w: string): string => {
  const pattern = `'%' || replace(replace(replace(${param}, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%'`;
  return `(${param}::text IS NULL OR ${w}.status_reason ILIKE ${pattern} OR EXISTS (
    SELECT 1 FROM step fs JOIN attempt fa ON fa.step_id = fs.id
    WHERE fs.workflow_id = ${w}.id AND fs.state = 'failed' AND fa.outcome_reason ILIKE ${pattern}))`;
};
