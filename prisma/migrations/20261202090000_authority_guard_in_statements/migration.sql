-- A refusal is now explained by the same guard clauses that refused it, written once in
-- lib/engine/sql/authority.ts and interpolated into each statement (the recording of fencing
-- rejections and the renewal's refusal reasons alike). The function held a second copy of those
-- clauses that could drift from the statements' guard.
DROP FUNCTION "fl_authority_verdict"(UUID, BIGINT, UUID);
