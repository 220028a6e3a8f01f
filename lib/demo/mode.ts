/**
 * Demo mode: `npm start` runs the product with its synthetic destination, and the workers page
 * doubles as a fault lab (pause, resume or kill a worker; switch the destination's faults).
 * Outside demo mode those controls do not exist.
 */
export function demoMode(): { destinationUrl: string } | null {
  const destinationUrl = process.env.FENCELINE_DESTINATION_URL;
  if (process.env.FENCELINE_MODE !== "demo" || !destinationUrl) return null;
  return { destinationUrl };
}
