-- Compensation (docs/decisions/022-compensation.md): a request whose effects are being undone is
-- `cancelling` (after a cancel) or `failing` (after a failure); it becomes `cancelled` or `failed`
-- once every compensation has its receipt. Added on their own, so the next migration can use them.
ALTER TYPE "workflow_status" ADD VALUE 'cancelling';
ALTER TYPE "workflow_status" ADD VALUE 'failing';
