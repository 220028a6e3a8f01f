-- An app key may read its own requests' evidence: each step's receipt (verification method,
-- external reference, observed result) and open review cases (GET /api/requests/{id}?include=steps).
ALTER TABLE "app_key" DROP CONSTRAINT "app_key_scopes_known";
ALTER TABLE "app_key" ADD CONSTRAINT "app_key_scopes_known"
  CHECK ("scopes" <@ ARRAY['requests:create', 'requests:read', 'requests:evidence', 'events:send']::text[] AND cardinality("scopes") > 0);

-- The kinds an app key may start; empty (the default) is every registered kind. A create of
-- another kind is refused as unknown, and the refusal lists only these kinds.
ALTER TABLE "app_key" ADD COLUMN "kinds" TEXT[] NOT NULL DEFAULT '{}';

-- How support can check a destination by hand when a step's outcome is unknown (shown on the
-- review case): a page with {requestIdentity} filled in, and/or a sentence. Words, not a promise:
-- like the epoch admin URL, they follow the latest registration and are not part of the shape.
ALTER TABLE "adapter_definition" ADD COLUMN "review_check_url" TEXT,
                                 ADD COLUMN "review_instructions" TEXT;
