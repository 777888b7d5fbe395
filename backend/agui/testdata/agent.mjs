// A small AG-UI 1.0 agent for Parley's tests and for trying Parley out, built on the
// protocol's own packages: every event it sends is checked by @ag-ui/core's EventSchema and
// encoded by @ag-ui/encoder, every RunAgentInput it gets is checked by RunAgentInputSchema
// (a null where the protocol wants a field left out is refused with HTTP 400), and it keeps
// the interrupt contract: a thread with open interrupts takes only a run whose resume answers
// every one of them, exactly once.
//
//   node backend/agui/testdata/agent.mjs [port]     prints {"url": "http://127.0.0.1:PORT/agent"}
//
// What it does is chosen by the words of the person's last message:
//   markdown   a Markdown answer, streamed      chunks     the same as TEXT_MESSAGE_CHUNKs
//   deploy     a tool call held by an interrupt (approve, with edits to its arguments and a note)
//   form       an input_required interrupt (quarter, year, revenue)
//   two        two interrupts at once           expire N   an interrupt that expires in N s
//   venue      a request_user_input call (Parley's frontend tool)
//   steps      steps and a plan in the state    fail       RUN_ERROR
//   flaky      RUN_ERROR on the thread's first try, an answer on the next
//   invalid    an event without its messageId   slow       text until stopped
//   cancel     a run that ends cancelled        anything else is echoed
// GET /agent/capabilities publishes its capabilities; GET /inputs lists the inputs it got,
// GET /aborted counts the runs its client gave up before they ended.
import http from "node:http";
import { EventType } from "@ag-ui/core";
import { EventSchema, RunAgentInputSchema, AgentCapabilitiesSchema } from "@ag-ui/core/schemas";
import { EventEncoder } from "@ag-ui/encoder";

const port = Number(process.argv[2] || process.env.PORT || 0);
const token = process.env.AGUI_TOKEN || "";
const threads = new Map(); // threadId -> { open: Map(id -> interrupt), answered: userMessageId }
const inputs = [];
let aborted = 0; // runs whose client went away before the run ended
let seq = 0;
const next = (p) => `${p}-${++seq}`;

const capabilities = AgentCapabilitiesSchema.parse({
  identity: { name: "Research assistant (AG-UI test agent)", description: "Answers, asks through interrupts and request_user_input." },
  tools: { supported: true, clientProvided: true },
  humanInTheLoop: { supported: true, interrupts: true, approvals: true },
});

const server = http.createServer(async (req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  if (token && req.headers.authorization !== `Bearer ${token}`) {
    res.writeHead(401, { "content-type": "text/plain" }).end("missing or wrong token");
    return;
  }
  if (req.method === "GET" && path === "/agent/capabilities") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(capabilities));
    return;
  }
  if (req.method === "GET" && path === "/inputs") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(inputs));
    return;
  }
  if (req.method === "GET" && path === "/aborted") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ aborted }));
    return;
  }
  if (req.method !== "POST" || path !== "/agent") {
    res.writeHead(404).end();
    return;
  }
  let body = "";
  for await (const chunk of req) body += chunk;
  let raw;
  try {
    raw = JSON.parse(body);
  } catch {
    res.writeHead(400).end("not JSON");
    return;
  }
  const parsed = RunAgentInputSchema.safeParse(raw);
  inputs.push({ input: raw, valid: parsed.success, error: parsed.success ? undefined : String(parsed.error) });
  if (!parsed.success) {
    res.writeHead(400, { "content-type": "text/plain" }).end("invalid RunAgentInput: " + parsed.error.message);
    return;
  }
  const encoder = new EventEncoder({ accept: req.headers.accept });
  res.writeHead(200, { "content-type": encoder.getContentType(), "cache-control": "no-cache" });
  let closed = false, ended = false;
  res.on("close", () => {
    closed = true;
    if (!ended) aborted++;
  });
  const send = (event) => {
    if (!closed) res.write(encoder.encodeSSE(EventSchema.parse(event)));
  };
  // send.raw sends an event past the schema check: one the protocol refuses, for Parley to name.
  send.raw = (event) => {
    if (!closed) res.write(`data: ${JSON.stringify(event)}\n\n`);
  };
  try {
    await runAgent(parsed.data, raw, send, () => closed);
  } catch (err) {
    send({ type: EventType.RUN_ERROR, message: String(err && err.message || err) });
  }
  ended = true;
  res.end();
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function say(send, text, pieces = 4) {
  const messageId = next("msg");
  send({ type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" });
  const size = Math.max(1, Math.ceil(text.length / pieces));
  for (let i = 0; i < text.length; i += size) {
    send({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: text.slice(i, i + size) });
    await sleep(5);
  }
  send({ type: EventType.TEXT_MESSAGE_END, messageId });
}

function lastUser(messages) {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === "user") return messages[i];
  return undefined;
}

async function runAgent(input, raw, send, isClosed) {
  const { threadId, runId, messages } = input;
  const thread = threads.get(threadId) || { open: new Map(), answered: undefined };
  threads.set(threadId, thread);
  const finish = (outcome) => send({ type: EventType.RUN_FINISHED, threadId, runId, ...(outcome ? { outcome } : {}) });
  send({ type: EventType.RUN_STARTED, threadId, runId });

  const resume = raw.resume || [];
  if (thread.open.size > 0 || resume.length > 0) {
    const ids = resume.map((r) => r.interruptId);
    const missing = [...thread.open.keys()].filter((id) => !ids.includes(id));
    const unknown = ids.filter((id) => !thread.open.has(id));
    const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
    if (missing.length || unknown.length || twice.length) {
      send({ type: EventType.RUN_ERROR, code: "resume_mismatch",
        message: `resume does not cover the open interrupts (missing ${missing.join(",") || "none"}, unknown ${unknown.join(",") || "none"}, twice ${twice.join(",") || "none"})` });
      return;
    }
    for (const entry of resume) {
      const it = thread.open.get(entry.interruptId);
      if (it.expiresAt && entry.status === "resolved" && Date.parse(it.expiresAt) <= Date.now()) {
        send({ type: EventType.RUN_ERROR, code: "expired", message: `interrupt ${it.id} expired` });
        return;
      }
    }
    thread.open.clear();
    for (const entry of resume) {
      const said = entry.status === "resolved"
        ? `Resolved ${entry.interruptId}: ${JSON.stringify(entry.payload ?? null)}`
        : `Cancelled ${entry.interruptId}${entry.payload?.reason ? ": " + entry.payload.reason : ""}`;
      await say(send, said, 2);
      const tc = thread.calls?.[entry.interruptId];
      if (tc) {
        const ran = entry.status === "resolved" && entry.payload?.approved;
        send({ type: EventType.TOOL_CALL_RESULT, messageId: next("result"), toolCallId: tc,
          content: ran ? `Deployed to ${entry.payload.editedArgs?.env ?? "production"}.` : "Not run." });
      }
    }
    const user = lastUser(messages);
    if (!user || user.id === thread.answered) {
      finish({ type: "success" });
      return;
    }
  }

  const last = messages[messages.length - 1];
  if (last && last.role === "tool") {
    await say(send, `Tool answer for ${last.toolCallId}: ${last.content}`);
    finish({ type: "success" });
    return;
  }
  const user = lastUser(messages);
  thread.answered = user?.id;
  const text = typeof user?.content === "string" ? user.content : "";
  const word = (w) => new RegExp(`\\b${w}\\b`, "i").test(text);

  if (word("markdown")) {
    await say(send, "# Findings\n\nThe answer has **three** parts:\n\n1. one\n2. two\n3. three\n\n```go\nfmt.Println(\"hi\")\n```\n", 12);
    finish({ type: "success" });
  } else if (word("chunks")) {
    const messageId = next("msg");
    send({ type: EventType.TEXT_MESSAGE_CHUNK, messageId, role: "assistant", delta: "Chunked " });
    send({ type: EventType.TEXT_MESSAGE_CHUNK, delta: "reply, " });
    send({ type: EventType.TEXT_MESSAGE_CHUNK, delta: "in three parts." });
    finish({ type: "success" });
  } else if (word("deploy")) {
    await say(send, "I am ready to deploy.");
    const toolCallId = next("call");
    send({ type: EventType.TOOL_CALL_START, toolCallId, toolCallName: "deploy" });
    send({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta: '{"env":' });
    send({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta: '"production"}' });
    send({ type: EventType.TOOL_CALL_END, toolCallId });
    const it = { id: next("int"), reason: "tool_call", toolCallId, message: "Deploy to production?",
      responseSchema: { type: "object", properties: {
        approved: { type: "boolean", title: "Approve the deploy" },
        editedArgs: { type: "object", description: "Full replacement of the tool args. Not merged.",
          properties: { env: { type: "string", enum: ["production", "staging"] } }, required: ["env"] },
        note: { type: "string", title: "Note", maxLength: 80 } }, required: ["approved"] } };
    thread.open.set(it.id, it);
    thread.calls = { ...(thread.calls || {}), [it.id]: toolCallId };
    finish({ type: "interrupt", interrupts: [it] });
  } else if (word("form") || word("two") || word("expire")) {
    const its = [];
    if (word("form") || word("two")) {
      its.push({ id: next("int"), reason: "input_required", message: "Please provide the quarterly filing details.",
        responseSchema: { type: "object", properties: {
          quarter: { type: "string", enum: ["Q1", "Q2", "Q3", "Q4"] },
          year: { type: "integer", minimum: 2000, maximum: 2100 },
          revenue: { type: "number", minimum: 0 } }, required: ["quarter", "year", "revenue"] } });
    }
    if (word("two")) {
      its.push({ id: next("int"), reason: "confirmation", message: "File it today?",
        responseSchema: { type: "object", properties: { today: { type: "boolean" } }, required: ["today"] } });
    }
    if (word("expire")) {
      const secs = Number((text.match(/expire (\d+)/i) || [])[1] || 2);
      its.push({ id: next("int"), reason: "input_required", message: "Which branch?", expiresAt: new Date(Date.now() + secs * 1000).toISOString(),
        responseSchema: { type: "object", properties: { branch: { type: "string", minLength: 1 } }, required: ["branch"] } });
    }
    for (const it of its) thread.open.set(it.id, it);
    send({ type: EventType.STATE_SNAPSHOT, snapshot: { stage: "waiting", steps: [
      { title: "Collect the details", status: "in_progress" }, { title: "File the report", status: "pending" }] } });
    finish({ type: "interrupt", interrupts: its });
  } else if (word("venue")) {
    await say(send, "Let me ask you.");
    const toolCallId = next("call");
    send({ type: EventType.TOOL_CALL_START, toolCallId, toolCallName: "request_user_input" });
    send({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta: JSON.stringify({ prompt: "Which venue?", request_type: "selection",
      context: { options: ["Pike Loft", "Harbor Hall"] } }) });
    send({ type: EventType.TOOL_CALL_END, toolCallId });
    finish({ type: "success", pendingToolCallIds: [toolCallId] });
  } else if (word("steps")) {
    send({ type: EventType.STEP_STARTED, stepName: "search" });
    await say(send, "Searching. ");
    send({ type: EventType.STEP_FINISHED, stepName: "search" });
    send({ type: EventType.STEP_STARTED, stepName: "summarize" });
    send({ type: EventType.STATE_SNAPSHOT, snapshot: { count: 1 } });
    send({ type: EventType.STATE_DELTA, delta: [{ op: "replace", path: "/count", value: 2 }, { op: "add", path: "/tags", value: ["a"] }] });
    await say(send, "Summarized.");
    send({ type: EventType.STEP_FINISHED, stepName: "summarize" });
    finish({ type: "success" });
  } else if (word("flaky") && !thread.failed) {
    thread.failed = true;
    send({ type: EventType.RUN_ERROR, message: "The model provider is overloaded; try again.", code: "overloaded" });
  } else if (word("fail")) {
    await say(send, "Starting…");
    send({ type: EventType.RUN_ERROR, message: "The model provider is down.", code: "provider_down" });
  } else if (word("invalid")) {
    const messageId = next("msg");
    send({ type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" });
    send.raw({ type: "TEXT_MESSAGE_CONTENT", delta: "no id" });
    finish({ type: "success" });
  } else if (word("slow")) {
    const messageId = next("msg");
    send({ type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" });
    for (let i = 0; i < 600 && !isClosed(); i++) {
      send({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: `tick ${i} ` });
      await sleep(100);
    }
    send({ type: EventType.TEXT_MESSAGE_END, messageId });
    finish({ type: "success" });
  } else if (word("cancel")) {
    await say(send, "Stopping here.");
    finish({ type: "cancelled" });
  } else {
    await say(send, `You said: ${text}`);
    finish({ type: "success" });
  }
}

server.listen(port, "127.0.0.1", () => {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}/agent` }));
});
process.on("SIGTERM", () => process.exit(0));
