/**
 * What `npm run dev` (`fenceline dev src/dev.ts`) serves: the `welcome` workflow, with the
 * greeting card service it calls started beside it. `fenceline dev` runs a worker that loads this
 * module, and loads it afresh when a file in src/ changes.
 */
import { startGreetingService } from "./greetings.js";
import { GREETINGS_URL } from "./workflow.js";

const service = await startGreetingService(Number(new URL(GREETINGS_URL).port));
console.log(`greeting card service at ${service.url} (GET ${service.url}/cards lists what it sent)`);

export { welcome } from "./workflow.js";
