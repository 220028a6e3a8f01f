/**
 * Demo mode: `npm start` runs the product with its synthetic destination, anonymous requests are
 * accepted (rate-limited), and the workers page doubles as a fault lab (pause, resume or kill a
 * worker; switch the destination's faults). Outside demo mode none of that exists, and the
 * lab's routes answer 404.
 */
import { LabUnavailableError } from "./errors";

export function demoMode(): { destinationUrl: string } | null {
  const destinationUrl = process.env.FENCELINE_DESTINATION_URL;
  if (process.env.FENCELINE_MODE !== "demo" || !destinationUrl) return null;
  return { destinationUrl };
}

export function requireDemo(): { destinationUrl: string } {
  const demo = demoMode();
  if (!demo) throw new LabUnavailableError();
  return demo;
}
