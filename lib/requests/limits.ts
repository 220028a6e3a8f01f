import { RateLimiter } from "@/lib/auth/rate-limit";

/** Request creation is public: per client address, a burst of 60, then two a second. */
export const requestCreationByClient = new RateLimiter("request creation", { capacity: 60, refillPerSecond: 2 });
