-- The app-key scopes of schedules (20261208300000) and of evidence (20261208400000) together:
-- each of those migrations wrote the list it knew (lib/auth/app-key-scopes.ts holds the whole list).
ALTER TABLE "app_key" DROP CONSTRAINT "app_key_scopes_known";
ALTER TABLE "app_key" ADD CONSTRAINT "app_key_scopes_known"
  CHECK ("scopes" <@ ARRAY['requests:create', 'requests:read', 'requests:evidence', 'events:send', 'schedules:manage']::text[] AND cardinality("scopes") > 0);
