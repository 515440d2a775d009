// The SDK oracle's Node readers: `node read.mjs BASE_URL` reads a JSON list of streams
// ({index, key, provider, dialect}) on stdin, reads each from the oracle's loopback server
// (the stream named by the x-oracle-stream header) with every Node way that reads its
// provider, and prints one JSON list of outcomes: {index, client, way, delivered | error}.
// One process for the whole batch, one client per SDK.
import Anthropic from "@anthropic-ai/sdk";
import { createAmazonBedrock } from "@ai-sdk/amazon-bedrock";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { jsonSchema, streamText, tool } from "ai";
import { readFileSync } from "node:fs";
import OpenAI from "openai";

globalThis.AI_SDK_LOG_WARNINGS = false; // warnings about the model name "m" are noise here
const HEADER = "x-oracle-stream";
const base = process.argv[2];
const version = (name) =>
  JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url))).version;

const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: "sk-oracle", maxRetries: 0 });
const anthropic = new Anthropic({ baseURL: base, apiKey: "sk-ant-oracle", maxRetries: 0 });
const OPENAI = `openai-node ${version("openai")}`;
const ANTHROPIC = `anthropic-node ${version("@anthropic-ai/sdk")}`;
const AI = `vercel-ai ${version("ai")}`;
const ask = [{ role: "user", content: "hi" }];
const args = (value) => (typeof value === "string" ? value : JSON.stringify(value ?? {}));

async function chatIterate(key) {
  const stream = await openai.chat.completions.create(
    { model: "m", messages: ask, stream: true },
    { headers: { [HEADER]: key } },
  );
  let text = "";
  let usage = null;
  let finish = null;
  const tools = new Map();
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage.completion_tokens;
    for (const choice of chunk.choices ?? []) {
      if (choice.index !== 0) continue;
      const delta = choice.delta ?? {};
      if (delta.content) text += delta.content; // the usual accumulation
      for (const call of delta.tool_calls ?? []) {
        tools.set(call.index, (tools.get(call.index) ?? "") + (call.function?.arguments ?? ""));
      }
      finish = choice.finish_reason ?? finish;
    }
  }
  const ordered = [...tools.keys()].sort((a, b) => a - b).map((i) => tools.get(i));
  return { text, tool_args: ordered, usage, finish };
}

async function chatHelper(key) {
  const runner = openai.chat.completions.stream(
    { model: "m", messages: ask },
    { headers: { [HEADER]: key } },
  );
  const final = await runner.finalChatCompletion();
  const choice = final.choices[0];
  const calls = (choice.message.tool_calls ?? []).filter((c) => c.type === "function");
  return {
    text: choice.message.content ?? "",
    tool_args: calls.map((c) => c.function.arguments),
    usage: final.usage ? final.usage.completion_tokens : null,
    finish: choice.finish_reason,
    role: choice.message.role,
  };
}

async function responsesHelper(key) {
  const stream = openai.responses.stream(
    { model: "m", input: "hi" },
    { headers: { [HEADER]: key } },
  );
  const final = await stream.finalResponse();
  const calls = final.output.filter((item) => item.type === "function_call");
  return {
    text: final.output_text,
    tool_args: calls.map((c) => c.arguments),
    usage: final.usage ? final.usage.output_tokens : null,
    finish: final.status,
  };
}

async function anthropicHelper(key) {
  const stream = anthropic.messages.stream(
    { model: "m", max_tokens: 64, messages: ask },
    { headers: { [HEADER]: key } },
  );
  const final = await stream.finalMessage();
  return {
    text: final.content.filter((b) => b.type === "text").map((b) => b.text).join(""),
    tool_args: final.content.filter((b) => b.type === "tool_use").map((b) => args(b.input)),
    usage: final.usage ? final.usage.output_tokens : null,
    finish: final.stop_reason,
  };
}

// The Vercel AI SDK runs a tool call only against a tool it was given: declare every name the
// body mentions (the oracle's own server hands the body over first) so tool calls come through.
// OpenAI's built-in Responses tools the application would have declared the same way.
const BUILT_IN = {
  local_shell_call: ["local_shell", () => aiOpenAI.tools.localShell({})],
  shell_call: ["shell", () => aiOpenAI.tools.shell({})],
  tool_search_call: ["tool_search", () => aiOpenAI.tools.toolSearch({})],
};

async function toolsOf(key) {
  const body = await (await fetch(`${base}/`, { headers: { [HEADER]: key } })).text();
  const names = new Set([...body.matchAll(/"name"\s*:\s*"([A-Za-z0-9_.-]{1,64})"/g)].map((m) => m[1]));
  const schema = jsonSchema({ type: "object", additionalProperties: true });
  const tools = Object.fromEntries([...names].map((n) => [n, tool({ inputSchema: schema })]));
  for (const [item, [name, make]] of Object.entries(BUILT_IN)) {
    if (body.includes(`"type":"${item}"`)) tools[name] = make();
  }
  return tools;
}

function vercel(model) {
  return async (key) => {
    const result = streamText({
      model: model(),
      prompt: "hi",
      tools: await toolsOf(key),
      headers: { [HEADER]: key },
      maxRetries: 0,
      onError: () => {}, // the error parts of fullStream are read below
    });
    let text = "";
    let finish;
    let raw;
    const toolArgs = [];
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") text += part.text;
      // a tool the provider ran itself (web search, code execution) is no call for the app
      else if (part.type === "tool-call" && !part.providerExecuted) toolArgs.push(args(part.input));
      else if (part.type === "error") throw part.error;
      else if (part.type === "tool-error") throw part.error;
      else if (part.type === "finish") [finish, raw] = [part.finishReason, part.rawFinishReason];
    }
    // The SDK maps finish reasons to its own words; its raw one compares with the stream's.
    return {
      text,
      tool_args: toolArgs,
      has_usage: false,
      finish: raw ?? null,
      has_finish: raw !== undefined,
      unified_finish: finish,
    };
  };
}

const aiOpenAI = createOpenAI({ baseURL: `${base}/v1`, apiKey: "sk-oracle" });
const aiCompatible = createOpenAICompatible({ name: "compatible", baseURL: `${base}/v1`, apiKey: "k" });
const aiAnthropic = createAnthropic({ baseURL: `${base}/v1`, apiKey: "sk-ant-oracle" });
const aiGoogle = createGoogleGenerativeAI({ baseURL: `${base}/v1beta`, apiKey: "oracle-key" });
const aiBedrock = createAmazonBedrock({
  baseURL: base,
  region: "us-east-1",
  accessKeyId: "AKIDORACLE",
  secretAccessKey: "oracle-secret",
});

const WAYS = {
  "openai-chat": [
    [OPENAI, "chat.completions.create({stream: true}) iteration", chatIterate],
    [OPENAI, "chat.completions.stream() finalChatCompletion()", chatHelper],
    [`${AI} @ai-sdk/openai ${version("@ai-sdk/openai")}`, "streamText() openai.chat", vercel(() => aiOpenAI.chat("m"))],
    [`${AI} @ai-sdk/openai-compatible ${version("@ai-sdk/openai-compatible")}`, "streamText()", vercel(() => aiCompatible.chatModel("m"))],
  ],
  "openai-responses": [
    [OPENAI, "responses.stream() finalResponse()", responsesHelper],
    [`${AI} @ai-sdk/openai ${version("@ai-sdk/openai")}`, "streamText() openai.responses", vercel(() => aiOpenAI.responses("m"))],
  ],
  anthropic: [
    [ANTHROPIC, "messages.stream() finalMessage()", anthropicHelper],
    [`${AI} @ai-sdk/anthropic ${version("@ai-sdk/anthropic")}`, "streamText()", vercel(() => aiAnthropic("m"))],
  ],
  gemini: [
    [`${AI} @ai-sdk/google ${version("@ai-sdk/google")}`, "streamText()", vercel(() => aiGoogle("gemini-2.5-flash"))],
  ],
  "bedrock-converse": [
    [`${AI} @ai-sdk/amazon-bedrock ${version("@ai-sdk/amazon-bedrock")}`, "streamText()", vercel(() => aiBedrock("anthropic.claude-3-5-haiku-20241022-v1:0"))],
  ],
};

async function main() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const batch = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const out = [];
  for (const stream of batch) {
    for (const [client, way, read] of WAYS[stream.provider] ?? []) {
      const row = { index: stream.index, client, way };
      try {
        row.delivered = await read(stream.key);
      } catch (error) {
        const message = String(error?.message ?? error).replace(/\s+/g, " ").slice(0, 160);
        row.error = { type: error?.name ?? typeof error, message };
      }
      out.push(row);
    }
  }
  process.stdout.write(`\n${JSON.stringify(out)}\n`); // the last line: anything above is noise
}

await main();
