/**
 * Fair share's levels as Prometheus gauges, beside the two families: per concurrency key (the
 * busiest, so the label set stays bounded) its steps ready, queued behind its limit and in
 * flight, and how long its oldest ready step has waited; per destination with a declared rate,
 * the rate, the calls of the last second and the steps waiting for a call slot.
 */
import type { StaffReadable } from "@/lib/db/read-pool-types";
import { BUSIEST_KEYS, readFairShare, type FairShareView } from "@/lib/fair-share/view";

const escapeLabel = (text: string) => text.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll('"', '\\"');
const labels = (pairs: Record<string, string>) => `{${Object.entries(pairs).map(([name, value]) => `${name}="${escapeLabel(value)}"`).join(",")}}`;

type Gauge = { readonly name: string; readonly help: string; readonly samples: readonly (readonly [Record<string, string> | null, number])[] };

/** Renders the view's gauges. Pure, so the format is tested without a database. */
export function renderFairShareGauges(view: FairShareView): string {
  const keys = view.busiest;
  const gauges: Gauge[] = [
    { name: "fenceline_fair_share_active_keys", help: "Concurrency keys with ready or leased steps.", samples: [[null, view.activeKeys]] },
    {
      name: "fenceline_fair_share_key_steps",
      help: `Steps of a concurrency key by state: ready (claimable), queued (behind its limit per key), in_flight (leased). The ${BUSIEST_KEYS} busiest keys.`,
      samples: keys.flatMap((key) => [
        [{ kind: key.kind, key: key.key, state: "ready" }, key.ready] as const,
        [{ kind: key.kind, key: key.key, state: "queued" }, key.queued] as const,
        [{ kind: key.kind, key: key.key, state: "in_flight" }, key.inFlight] as const,
      ]),
    },
    {
      name: "fenceline_fair_share_key_limit",
      help: "The limit on steps in flight per key of the key's kind (keys of kinds without a limit are left out).",
      samples: keys.filter((key) => key.limitPerKey !== null).map((key) => [{ kind: key.kind, key: key.key }, key.limitPerKey!] as const),
    },
    {
      name: "fenceline_fair_share_key_oldest_wait_seconds",
      help: "How long the oldest ready step of a concurrency key has waited, by the database clock.",
      samples: [...keys, ...view.waitingLongest]
        .filter((key, index, all) => key.waitingMs !== null && all.findIndex((other) => other.kind === key.kind && other.key === key.key) === index)
        .map((key) => [{ kind: key.kind, key: key.key }, key.waitingMs! / 1000] as const),
    },
    { name: "fenceline_destination_rate_per_second", help: "Calls per second a destination's adapter declares.", samples: view.destinations.map((d) => [{ adapter: d.adapter }, d.perSecond] as const) },
    { name: "fenceline_destination_calls_last_second", help: "Calls a rated destination started in the last second of the database clock.", samples: view.destinations.map((d) => [{ adapter: d.adapter }, d.callsLastSecond] as const) },
    { name: "fenceline_destination_steps_waiting_for_rate", help: "Steps waiting, without a lease, for a call slot at a rated destination.", samples: view.destinations.map((d) => [{ adapter: d.adapter }, d.waiting] as const) },
  ];
  const lines: string[] = [];
  for (const gauge of gauges) {
    lines.push(`# HELP ${gauge.name} ${gauge.help}`, `# TYPE ${gauge.name} gauge`);
    for (const [pairs, value] of gauge.samples) lines.push(`${gauge.name}${pairs ? labels(pairs) : ""} ${value}`);
  }
  return `${lines.join("\n")}\n`;
}

export async function fairShareExposition(pool: StaffReadable): Promise<string> {
  return renderFairShareGauges(await readFairShare(pool));
}
