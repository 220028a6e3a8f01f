/**
 * The seam through which the request page reads every wait room's waits (lib/waits/rooms.ts
 * waitTimelines). Apart from ./types.ts, which the package's doors name: this one names the
 * database handle's type, which adopters' typecheck must never see.
 */
import type { StaffReadable } from "@/lib/db/read-pool-types";
import type { WaitLine } from "./types";

/** A room's part of the request page's timeline: its waits of a request, in its words. */
export type WaitTimeline = {
  readonly room: string;
  /** The waits of request `requestId` held in this room (one statement, by the room's request index). */
  linesOf(db: StaffReadable, requestId: string): Promise<WaitLine[]>;
};
