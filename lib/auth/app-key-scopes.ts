/** What an app key may do; a module of its own so the admin page can list the scopes without the server code. */
export const APP_KEY_SCOPES = ["requests:create", "requests:read"] as const;
/** `requests:create` creates and cancels the app's requests; `requests:read` reads them. */
export type AppKeyScope = (typeof APP_KEY_SCOPES)[number];
