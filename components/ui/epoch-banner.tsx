import { connection } from "next/server";
import { epochStatus } from "@/lib/engine/epoch";
import { pool } from "@/lib/db/pool";

/**
 * Shown on every staff page while claims are stopped: an epoch transition under way, or a fenced
 * destination that did not take the current epoch and stays blocked until one succeeds there.
 */
export async function EpochBanner() {
  // Read per request, never baked into a prerendered page.
  await connection();
  const status = await epochStatus(pool()).catch(() => null);
  if (!status || (!status.transition && status.blocked.length === 0)) return null;
  return (
    <div role="status" className="state error" style={{ margin: "0.75rem 1rem 0", borderStyle: "solid" }}>
      {status.transition ? (
        <p style={{ margin: 0 }}>
          Epoch transition {status.transition.id} in progress ({status.transition.state}): no step is being claimed. Reason: {status.transition.reason}
        </p>
      ) : null}
      {status.blocked.map((block) => (
        <p key={block.adapter} style={{ margin: 0 }}>
          Destination <strong>{block.adapter}</strong> is blocked: {block.reason}. Its steps wait until an epoch transition installs epoch{" "}
          {status.epoch} there (<code>npm run epoch:transition</code>).
        </p>
      ))}
    </div>
  );
}
