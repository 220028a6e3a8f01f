import { RateLimiter } from "@/lib/auth/rate-limit";
import { integerFromEnv } from "@/lib/env";

/** Posts to one-time URLs (no key: the URL is the credential): per client address, a burst of 60, then ten a second. */
export const eventSendingByClient = new RateLimiter("event-sending-by-client", "event sending through a one-time URL", { capacity: 60, refillPerSecond: 10 });

let byApp: RateLimiter | null = null;

/**
 * Events per app key: FENCELINE_APP_EVENT_BURST (default 2,000) at once, then
 * FENCELINE_APP_EVENTS_PER_SECOND (default 1,000). One app's burst cannot starve the others.
 */
export function eventSendingByApp(): RateLimiter {
  byApp ??= new RateLimiter("event-sending-by-app", "event sending by app", {
    capacity: integerFromEnv("FENCELINE_APP_EVENT_BURST", 2_000),
    refillPerSecond: integerFromEnv("FENCELINE_APP_EVENTS_PER_SECOND", 1_000),
  });
  return byApp;
}
