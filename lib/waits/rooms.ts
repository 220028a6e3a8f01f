/**
 * The rooms that hold waiting steps, and everything else the database clock makes due: the one
 * list the coordinators read (docs/decisions/019-steps-that-wait.md). A new kind of wait is a
 * room of its own, added here; the core reaches it only through lib/engine/waits.ts.
 */
import type { DueWork, WaitRoom } from "@/lib/engine/waits";
import { eventRoom } from "@/lib/events/room";
import { timerRoom } from "@/lib/timers/room";

export const waitRooms: readonly WaitRoom[] = [timerRoom, eventRoom];

/** What the keepers settle on each pass. */
export const dueWork: readonly DueWork[] = [...waitRooms];
