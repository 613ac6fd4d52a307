#!/usr/bin/env node
// The floor of the peer benchmark: an MCP stdio server with one tool, run,
// that is "a model call and a shell". It sends the message to the chat
// completions endpoint at OPENAI_BASE_URL (model OPENAI_MODEL) with one
// function tool, shell; runs each command the model asks for with bash -c
// in the server's working directory; sends the output back; and returns the
// model's final text. The history of one server process is one
// conversation. No retries, no streaming, no sandbox, no memory.
import { execFile } from "node:child_process";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const base = (process.env.OPENAI_BASE_URL ?? "http://127.0.0.1:9/v1").replace(/\/$/, "");
const model = process.env.OPENAI_MODEL ?? "llmtest";
const tools = [{
  type: "function",
  function: {
    name: "shell",
    description: "Run a bash command and return its output (stdout and stderr) and exit code.",
    parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  },
}];
const messages = [{ role: "system", content: "You are a coding agent. Use the shell tool to act; answer in plain text when done." }];

/** Runs command with bash -c and returns its output and exit code. */
function shell(command) {
  return new Promise((resolve) => {
    execFile("bash", ["-c", command], { maxBuffer: 1 << 20, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve(`${stdout}${stderr}\n[exit code ${err ? (err.code ?? 1) : 0}]`);
    });
  });
}

/** One chat completion over the history. */
async function complete() {
  const res = await fetch(`${base}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${process.env.OPENAI_API_KEY ?? "none"}` },
    body: JSON.stringify({ model, messages, tools }),
  });
  if (!res.ok) throw new Error(`model: ${res.status} ${await res.text()}`);
  return (await res.json()).choices[0].message;
}

/** Runs one user message to the model's final answer. */
async function run(message) {
  messages.push({ role: "user", content: message });
  for (let step = 0; step < 50; step++) {
    const msg = await complete();
    messages.push(msg);
    if (!msg.tool_calls?.length) return msg.content ?? "";
    for (const call of msg.tool_calls) {
      let out;
      try { out = await shell(JSON.parse(call.function.arguments).command); } catch (e) { out = `error: ${e.message}`; }
      messages.push({ role: "tool", tool_call_id: call.id, content: out });
    }
  }
  throw new Error("too many steps");
}

const server = new McpServer({ name: "node-agent", version: "1.0.0" });
server.registerTool("run", {
  description: "Run a task with a model and a shell; returns the model's final answer.",
  inputSchema: { message: z.string() },
}, async ({ message }) => {
  try {
    return { content: [{ type: "text", text: await run(message) }] };
  } catch (e) {
    return { isError: true, content: [{ type: "text", text: String(e.message) }] };
  }
});
await server.connect(new StdioServerTransport());
