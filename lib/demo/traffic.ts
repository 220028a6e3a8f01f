/**
 * Demo traffic: creates `delivery` requests at a steady rate through the public client, as an
 * adopter's backend would, spread over the destination contracts by a weighted mix, so a fresh
 * `npm start` has requests moving through every recovery path. Requests are created one at a
 * time; a slow server lowers the rate instead of piling up requests.
 */
import { randomBytes } from "node:crypto";
import type { FencelineClient } from "fenceline/client";
import { DELIVER_VIA, DELIVERY_KIND, type DeliverVia, type DeliveryRequest, type DeliveryWorkflow } from "./workflow";

/** Relative weight of each deliverVia; a weight of 0 leaves it out. */
export type DeliveryMix = Readonly<Record<DeliverVia, number>>;

export const DEFAULT_DELIVERY_MIX: DeliveryMix = { idempotent: 6, queryable: 3, opaque: 1 };

/** Parses `idempotent=6,queryable=3,opaque=1`; an empty or missing text is the default mix. */
export function parseDeliveryMix(text: string | undefined): DeliveryMix {
  if (text === undefined || text.trim() === "") return DEFAULT_DELIVERY_MIX;
  const mix: Record<DeliverVia, number> = { idempotent: 0, queryable: 0, opaque: 0 };
  for (const part of text.split(",")) {
    const [name, weight, ...rest] = part.split("=").map((piece) => piece.trim());
    const via = DELIVER_VIA.find((candidate) => candidate === name);
    const value = Number(weight);
    if (!via || rest.length > 0 || weight === undefined || weight === "" || !Number.isInteger(value) || value < 0) {
      throw new Error(`FENCELINE_DEMO_MIX must look like "idempotent=6,queryable=3,opaque=1" (names: ${DELIVER_VIA.join(", ")}; weights: integers >= 0), got "${text}"`);
    }
    mix[via] = value;
  }
  if (DELIVER_VIA.every((via) => mix[via] === 0)) throw new Error(`FENCELINE_DEMO_MIX gives every deliverVia a weight of 0: "${text}"`);
  return mix;
}

export const formatDeliveryMix = (mix: DeliveryMix): string => DELIVER_VIA.map((via) => `${via}=${mix[via]}`).join(",");

export function pickDeliverVia(mix: DeliveryMix, random: () => number): DeliverVia {
  const total = DELIVER_VIA.reduce((sum, via) => sum + mix[via], 0);
  let draw = random() * total;
  for (const via of DELIVER_VIA) {
    draw -= mix[via];
    if (draw < 0) return via;
  }
  return DELIVER_VIA.findLast((via) => mix[via] > 0)!;
}

export type DemoTrafficOptions = {
  /** An app client whose key may create requests. */
  readonly client: FencelineClient;
  /** Requests created per minute; must be positive. */
  readonly ratePerMinute: number;
  readonly mix?: DeliveryMix;
  readonly random?: () => number;
  /** One line per request created, and per failed attempt. */
  readonly log?: (line: string) => void;
};

export type DemoTraffic = {
  /** Workflows this generator has created so far. */
  readonly created: () => number;
  /** Creates no more requests; resolves once the one in progress (if any) has finished. */
  stop(): Promise<void>;
};

const RECIPIENTS = 20;
/** The demo's app serves a few shops; each request counts against its shop for fair share. */
const SHOPS = 4;

export function startDemoTraffic(options: DemoTrafficOptions): DemoTraffic {
  if (!(options.ratePerMinute > 0)) throw new Error(`demo traffic needs a positive rate, got ${options.ratePerMinute}`);
  const intervalMs = 60_000 / options.ratePerMinute;
  const mix = options.mix ?? DEFAULT_DELIVERY_MIX;
  const random = options.random ?? Math.random;
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  // Keys unique to this run, so a restart never collides with an earlier run's requests.
  const run = randomBytes(4).toString("hex");

  let sequence = 1;
  // Kept until created: a retry after an error sends the same key with the same input.
  let pending: { key: string; shop: string; request: DeliveryRequest } | undefined;
  let created = 0;
  let stopped = false;
  let due = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let inProgress: Promise<void> | undefined;

  const createNext = async (): Promise<void> => {
    pending ??= {
      key: `demo-${run}-${sequence}`,
      shop: `shop-${(sequence % SHOPS) + 1}`,
      request: {
        recipient: `recipient-${(sequence % RECIPIENTS) + 1}@example.test`,
        message: `Order ${sequence}: your parcel is on its way`,
        deliverVia: pickDeliverVia(mix, random),
      },
    };
    const { key, shop, request } = pending;
    try {
      const workflow = await options.client.requests.create<DeliveryWorkflow>(DELIVERY_KIND, request, { idempotencyKey: key, concurrencyKey: shop });
      pending = undefined;
      sequence += 1;
      if (workflow.created) created += 1;
      // The request may have committed before an error hid it: the key finds it instead of a duplicate.
      const what = workflow.created ? "created" : "already existed:";
      log(`${what} delivery ${workflow.id} via ${request.deliverVia} (key ${key}) ${workflow.trackUrl}`);
    } catch (error) {
      log(`could not create delivery (key ${key}), retrying with the same key: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      inProgress = createNext().finally(() => {
        inProgress = undefined;
        // Behind schedule after a slow create: go on at once, but never catch up in a burst.
        due = Math.max(due + intervalMs, Date.now());
        schedule();
      });
    }, Math.max(0, due - Date.now()));
  };
  schedule();

  return {
    created: () => created,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await inProgress;
    },
  };
}
