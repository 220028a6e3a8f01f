/** A setting the scripts cannot run without; `npm start` in Fenceline's checkout prints all three. */
export function required(name: "FENCELINE_URL" | "FENCELINE_WORKER_TOKEN" | "FENCELINE_API_KEY"): string {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is not set. Fenceline's \`npm start\` prints three export lines at the end of its start-up: paste them into this shell.`);
    process.exit(2);
  }
  return value;
}
