/** Refusals of who is asking: no session, no permission, a cross-site request, a wrong password, too many tries. */
import { FencelineError } from "@/lib/engine/errors";

/** A staff operation without a (live) staff session. */
export class NotSignedInError extends FencelineError {
  readonly code = "not_signed_in";
  constructor() {
    super("sign in as staff first (POST /api/session)");
  }
}

/** Signed in, without a role that grants the permission; or a state-changing request from another site. */
export class PermissionDeniedError extends FencelineError {
  readonly code = "permission_denied";
}

export class InvalidCredentialsError extends FencelineError {
  readonly code = "invalid_credentials";
  constructor() {
    super("the email or the password is wrong");
  }
}

export class AccountExistsError extends FencelineError {
  readonly code = "account_exists";
  constructor(readonly email: string) {
    super(`an account for ${email} already exists`);
  }
}

/** A rate limit's bucket is empty; the caller may try again after `retryAfterSeconds`. */
export class RateLimitedError extends FencelineError {
  readonly code = "rate_limited";
  constructor(readonly limit: string, readonly retryAfterSeconds: number) {
    super(`${limit}: too many attempts; retry in ${retryAfterSeconds} s`);
  }
}

/** A bearer credential on the Prometheus scrape that is not a valid, unrevoked scrape token. */
export class ScrapeTokenRequiredError extends FencelineError {
  readonly code = "scrape_token_required";
  constructor() {
    super("a valid, unrevoked scrape token is required (Authorization: Bearer fl_scrape_…), or a staff session");
  }
}

/** An app call without a valid, unrevoked app key. */
export class AppKeyRequiredError extends FencelineError {
  readonly code = "app_key_required";
  constructor() {
    super("a valid, unrevoked app key is required (Authorization: Bearer fl_app_…)");
  }
}
