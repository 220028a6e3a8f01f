-- A lease and its attempt are written together by the claim, the only statement that inserts a
-- lease, and attempts are never deleted; the foreign key checked nothing that statement does not
-- already guarantee. It was also the claim's largest cost: each connection plans the key check
-- once and keeps the plan, so a connection that first checked while the attempt table was small
-- kept scanning all of it for every new lease (a claim of 50 took 12 of its 16 ms at 5,000
-- attempts). The model-based tests check that every lease names the attempt of its own step and
-- fencing term.
ALTER TABLE "lease" DROP CONSTRAINT "lease_attempt_id_fkey";
