/** What an app key may do; a module of its own so the admin page can list the scopes without the server code. */
export const APP_KEY_SCOPES = ["requests:create", "requests:read", "events:send"] as const;
/** `requests:create` creates and cancels the app's requests; `requests:read` reads them; `events:send` sends events to waiting requests. */
export type AppKeyScope = (typeof APP_KEY_SCOPES)[number];
