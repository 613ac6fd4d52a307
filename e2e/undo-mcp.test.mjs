// Issue 27 through the real `zero mcp`, driven by @modelcontextprotocol/sdk:
// a run changes the workspace with text_editor and with a command,
// zero_undo puts every file back on disk and takes the run out of the
// conversation; a file the user changed since is asked about by
// elicitation; zero_rewind lists the checkpoints; and a session forked
// with zero_fork is continued by a second `zero mcp` (same HOME, so the
// same session store) while the original's history stays its own.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { ZERO_BIN, tempDir, answer, startModel } from "./lib.mjs";
import { undoReplies, put, seed, listing } from "./undo.mjs";

/** A HOME for one or more `zero mcp` processes: they share its session store. */
function home(t) {
  const dir = tempDir(t, "zero-home-");
  return { HOME: dir, XDG_CONFIG_HOME: join(dir, ".config") };
}

/** An SDK client on `zero mcp` over stdio with home; closed when the test ends. */
async function mcpClient(t, url, h, { capabilities = {} } = {}) {
  const env = { PATH: process.env.PATH, TMPDIR: process.env.TMPDIR ?? "/tmp", ZERO_MODEL: "llmtest", OPENAI_BASE_URL: url,
    ZERO_SANDBOX: "local", ZERO_APPROVAL: "auto", ...h };
  const transport = new StdioClientTransport({ command: ZERO_BIN, args: ["mcp"], env, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (d) => { stderr += d; });
  const client = new Client({ name: "e2e-undo", version: "1" }, { capabilities });
  t.after(() => client.close());
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`connect: ${e.message}\n${stderr}`);
  }
  client.stderrText = () => stderr;
  return client;
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert.ok(!res.isError, `${name} failed: ${JSON.stringify(res.content)}\n${client.stderrText()}`);
  assert.ok(res.structuredContent, `${name} has no structured content`);
  return res.structuredContent;
}

const textOf = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

/** Polls zero_status until cond; returns the last status and every event. */
async function follow(client, session, cond, since = 0) {
  const events = [];
  const end = Date.now() + 30000;
  for (;;) {
    const st = await call(client, "zero_status", { session, since, wait: 2 });
    events.push(...st.events);
    since = st.cursor;
    if (cond(st)) return { st, events };
    if (Date.now() > end) throw new Error(`zero_status never got there: ${JSON.stringify(events.map((e) => e.type))}`);
  }
}
const finished = (st) => !st.running && st.result;

test("zero_undo puts back the files a run changed by a tool and by a command, and takes the run out of the conversation", async (t) => {
  const url = await startModel(t, undoReplies);
  const ws = tempDir(t);
  seed(ws);
  const before = listing(ws);
  const client = await mcpClient(t, url, home(t));
  const { tools } = await client.listTools();
  const undoTool = tools.find((x) => x.name === "zero_undo");
  assert.equal(undoTool?.annotations?.destructiveHint, true, "zero_undo is destructive");

  const ran = await call(client, "zero_run", { message: "make the mess", workspace: ws });
  assert.equal(ran.response, "mess made");
  const mess = listing(ws);
  assert.equal(mess["kept.txt"], "changed by the agent\n");
  assert.equal(mess["out/made.txt"], "new\n");
  assert.equal(mess["gone.txt"], undefined);

  const list = await call(client, "zero_rewind", { session: ran.session });
  assert.equal(list.checkpoints.length, 1);
  assert.equal(list.checkpoints[0].title, "make the mess");
  assert.ok(list.checkpoints[0].skipped.some((s) => s.startsWith("build/")), `the list says build/ is not covered: ${JSON.stringify(list)}`);

  const undone = await call(client, "zero_undo", { session: ran.session });
  assert.deepEqual(listing(ws), before, "the workspace is as it was before the run");
  assert.deepEqual(undone.restored, ["gone.txt", "kept.txt"]);
  assert.ok(undone.removed.includes("out/made.txt"), JSON.stringify(undone));
  assert.ok(undone.messages_removed > 0, JSON.stringify(undone));

  const next = await call(client, "zero_run", { message: "after the undo", session: ran.session });
  assert.equal(next.response, "fresh", "the request after the undo does not hold the undone run");
  const { events } = await follow(client, ran.session, finished);
  const rewound = events.find((e) => e.type === "rewound");
  assert.ok(rewound?.rewind?.deleted.includes("out/made.txt"), `a rewound event with its report: ${JSON.stringify(rewound)}`);
  assert.ok(events.some((e) => e.type === "checkpoint" && e.checkpoint?.id === 2), "the next run's checkpoint is an event");
});

test("a file the user changed since the run is asked about by elicitation, and kept", async (t) => {
  const url = await startModel(t, undoReplies);
  const ws = tempDir(t);
  seed(ws);
  const before = listing(ws);
  const client = await mcpClient(t, url, home(t), { capabilities: { elicitation: {} } });
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    asked.push(req.params.message);
    return { action: "accept", content: { choice: "keep" } };
  });
  const ran = await call(client, "zero_run", { message: "make the mess", workspace: ws });
  assert.equal(ran.response, "mess made");
  put(ws, "kept.txt", "the user fixed it by hand\n");

  const undone = await call(client, "zero_undo", { session: ran.session });
  assert.equal(asked.length, 1);
  assert.match(asked[0], /kept\.txt/);
  assert.deepEqual(undone.kept, ["kept.txt"]);
  assert.deepEqual(listing(ws), { ...before, "kept.txt": "the user fixed it by hand\n" });
});

test("without elicitation the conflict is an error naming the file; conflicts overwrite then restores it", async (t) => {
  const url = await startModel(t, undoReplies);
  const ws = tempDir(t);
  seed(ws);
  const before = listing(ws);
  const client = await mcpClient(t, url, home(t));
  const ran = await call(client, "zero_run", { message: "make the mess", workspace: ws });
  put(ws, "kept.txt", "the user fixed it by hand\n");
  const mid = listing(ws);

  const res = await client.callTool({ name: "zero_undo", arguments: { session: ran.session } });
  assert.ok(res.isError, "a conflict is an error result");
  assert.match(textOf(res), /kept\.txt/);
  assert.match(textOf(res), /conflicts "keep"/);
  assert.deepEqual(listing(ws), mid, "nothing was changed");

  await call(client, "zero_undo", { session: ran.session, conflicts: "overwrite" });
  assert.deepEqual(listing(ws), before);
});

test("zero_fork continued by another zero mcp leaves the original's history unchanged", async (t) => {
  // Each reply is the first unused one whose match the request holds: a
  // "LEAK" reply answers a request that holds what it must not.
  const url = await startModel(t, [
    { match: "fork answer", content: answer("LEAK: the fork's run is in the original") },
    { match: "back in the original", content: answer("original again") },
    { match: "answer two", content: answer("LEAK: run 2 is in the fork") },
    { match: "in the fork", content: answer("fork answer") },
    { match: "second question", content: answer("answer two") },
    { match: "first question", content: answer("answer one") },
  ]);
  const ws = tempDir(t);
  const h = home(t);
  const first = await mcpClient(t, url, h);
  const one = await call(first, "zero_run", { message: "first question", workspace: ws });
  assert.equal(one.response, "answer one");
  const two = await call(first, "zero_run", { message: "second question", session: one.session });
  assert.equal(two.response, "answer two");
  const fork = await call(first, "zero_fork", { session: one.session, at_run: 1 });
  assert.notEqual(fork.session, one.session);
  assert.equal(fork.from, one.session);
  assert.equal(fork.run, 1);

  const second = await mcpClient(t, url, h);
  const started = await call(second, "zero_reply", { session: fork.session, message: "in the fork" });
  const { st, events } = await follow(second, fork.session, finished, 0);
  assert.equal(st.result.response, "fork answer", "the fork holds the first run only");
  assert.equal(started.session, fork.session);
  assert.ok(events.some((e) => e.type === "forked" && e.fork?.from === one.session), "the fork says where it came from");
  assert.ok(!events.some((e) => e.type === "run_started" && e.text === "second question"), "the fork's log stops after run 1");

  const back = await call(first, "zero_run", { message: "back in the original", session: one.session });
  assert.equal(back.response, "original again", "the original's history is its own");
  const orig = await follow(first, one.session, finished, 0);
  assert.ok(!orig.events.some((e) => e.type === "forked" || e.text === "in the fork"), "the original's log holds nothing of the fork");
});
