/** The fault lab exists only in demo mode (`npm start`); elsewhere its routes answer 404. */
import { HttpProblem } from "@/lib/api/http";
import { demoMode } from "@/lib/demo/mode";

export function requireDemo(): { destinationUrl: string } {
  const demo = demoMode();
  if (!demo) throw new HttpProblem(404, "Not found", "the fault lab exists only in demo mode (npm start)");
  return demo;
}
