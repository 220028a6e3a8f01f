/** What an app key may do; a module of its own so the admin page can list the scopes without the server code. */
export const APP_KEY_SCOPES = ["requests:create", "requests:read", "requests:evidence", "events:send", "schedules:manage"] as const;
/**
 * `requests:create` creates and cancels the app's requests; `requests:read` reads them;
 * `requests:evidence` reads their steps' receipts and open review cases (with requests:read);
 * `events:send` sends events to waiting requests; `schedules:manage` creates, reads, pauses,
 * resumes and deletes the app's schedules.
 */
export type AppKeyScope = (typeof APP_KEY_SCOPES)[number];
