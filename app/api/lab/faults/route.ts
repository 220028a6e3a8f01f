/** GET/PUT /api/lab/faults — the fault lab destination service's faults (demo mode only). */
import { labFaultsSchema } from "@/lib/api/contract/engineer/lab";
import { handle, json, readJson } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { requireDemo } from "@/lib/lab/demo";
import { labFaultSettingsSchema } from "@/lib/lab/fault-settings";
import { readFaults, replaceFaults } from "@/lib/lab/faults";

export const dynamic = "force-dynamic";

export const GET = handle(async (request) => {
  const { destinationUrl } = requireDemo();
  await authorize(request, "lab:operate");
  return json(labFaultsSchema, await readFaults(destinationUrl));
});

export const PUT = handle(async (request) => {
  const { destinationUrl } = requireDemo();
  await authorize(request, "lab:operate");
  const settings = await readJson(request, labFaultSettingsSchema);
  return json(labFaultsSchema, await replaceFaults(destinationUrl, settings));
});
