-- Child requests (docs/decisions/023-child-requests.md): a step that starts other requests and
-- completes when they have ended. Its receipt is verified by the children's own ends, a method of
-- its own. PostgreSQL cannot use an enum label in the transaction that adds it, so the room's
-- tables and triggers, which do, follow in 20261208200100_child_requests.

ALTER TYPE "verification_method" ADD VALUE 'children_ended';
