// Reads one JSON event per line on stdin and prints, one line each, whether @ag-ui/core's
// EventSchema accepts it: "ok", or "no" and the first issue. Parley's own validation is
// tested against this answer.
import readline from "node:readline";
import { EventSchema } from "@ag-ui/core/schemas";

const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  const r = EventSchema.safeParse(JSON.parse(line));
  console.log(r.success ? "ok" : "no " + JSON.stringify(r.error.issues[0]?.path ?? []));
}
