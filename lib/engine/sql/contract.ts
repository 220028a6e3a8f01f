/**
 * The registered contract of a step's adapter, as one JSON column beside the row that needs it:
 * recovery, the review queue and case, the step page and the end-user projection all read it
 * this way, from PostgreSQL, so no process has to have loaded the adapter's code to judge a step.
 * NULL when no contract is registered for that adapter name and version.
 */
export const contractColumn = (adapterName: string, adapterVersion: string): string => `(
    SELECT to_jsonb(d) FROM (
      SELECT ad.name, ad.version, ad.external_effect AS "externalEffect", ad.idempotency_keys AS "idempotencyKeys",
             ad.status_query AS "statusQuery", ad.fence_enforcement AS "fenceEnforcement", ad.repetition,
             ad.timeout_ms AS "timeoutMs", ad.concurrency_limit AS "concurrencyLimit",
             CASE WHEN ad.rate_per_second IS NOT NULL THEN jsonb_build_object('perSecond', ad.rate_per_second, 'burst', ad.rate_burst) END AS rate
      FROM adapter_definition ad
      WHERE ad.name = ${adapterName} AND ad.version = ${adapterVersion}
    ) d
  )`;
