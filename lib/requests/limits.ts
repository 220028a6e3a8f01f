import { RateLimiter } from "@/lib/auth/rate-limit";
import { integerFromEnv } from "@/lib/env";

/** Anonymous request creation (demo mode only): per client address, a burst of 60, then two a second. */
export const requestCreationByClient = new RateLimiter("request-creation-by-client", "request creation", { capacity: 60, refillPerSecond: 2 });

let byApp: RateLimiter | null = null;

/**
 * Request creation per app key: FENCELINE_APP_REQUEST_BURST (default 500) at once, then
 * FENCELINE_APP_REQUESTS_PER_SECOND (default 200). One app's burst cannot starve the others.
 */
export function requestCreationByApp(): RateLimiter {
  byApp ??= new RateLimiter("request-creation-by-app", "request creation by app", {
    capacity: integerFromEnv("FENCELINE_APP_REQUEST_BURST", 500),
    refillPerSecond: integerFromEnv("FENCELINE_APP_REQUESTS_PER_SECOND", 200),
  });
  return byApp;
}
