/** The fault lab exists only in demo mode (`npm start`); elsewhere its routes answer 404. */
import { demoMode } from "@/lib/demo/mode";
import { LabUnavailableError } from "./errors";

export function requireDemo(): { destinationUrl: string } {
  const demo = demoMode();
  if (!demo) throw new LabUnavailableError();
  return demo;
}
