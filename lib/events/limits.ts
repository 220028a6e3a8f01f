import { RateLimiter } from "@/lib/auth/rate-limit";
import { integerFromEnv } from "@/lib/env";

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
