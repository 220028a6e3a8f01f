/**
 * The rooms that hold waiting steps, and everything else the database clock makes due: the one
 * list the coordinators read (docs/decisions/019-steps-that-wait.md; schedules: 024). A new kind
 * of wait is a room of its own, added here; the core reaches it only through lib/engine/waits.ts.
 * Each room also tells its waits on a request's timeline in its own words (waitTimelines): the
 * request page reads them through that list and learns no room by name.
 */
import type { DueWork, WaitRoom } from "@/lib/engine/waits";
import { childrenRoom } from "@/lib/children/room";
import { eventRoom } from "@/lib/events/room";
import { scheduleRoom } from "@/lib/schedules/room";
import { timerRoom } from "@/lib/timers/room";
import { compensationWork } from "@/lib/compensation/plan";
import { childrenTimeline } from "@/lib/children/timeline";
import { eventTimeline } from "@/lib/events/timeline";
import { timerTimeline } from "@/lib/timers/timeline";
import type { WaitTimeline } from "./timeline";

export const waitRooms: readonly WaitRoom[] = [timerRoom, eventRoom, childrenRoom];

/** What the keepers settle on each pass: the waits, the undos whose requests have nothing left in flight (lib/compensation), and the schedules' due times (lib/schedules). */
export const dueWork: readonly DueWork[] = [...waitRooms, compensationWork, scheduleRoom];

/** Each wait room's lines on a request's timeline (docs/decisions/029). */
export const waitTimelines: readonly WaitTimeline[] = [timerTimeline, eventTimeline, childrenTimeline];
