// A user's Node program: stream one recorded request with the openai or @anthropic-ai/sdk SDK.
// argv: provider (openai|anthropic), setup (none|undici), path of the JSON request body.
// Forward mode (HTTPS_PROXY set by `replayproxy replay -- node ...`) talks to the real host
// name; base-URL mode uses REPLAYPROXY_URL. Prints "TEXT <text>" or "ERROR <class> <message>".
import { readFileSync } from "node:fs";

const [provider, setup, bodyPath] = process.argv.slice(2);
if (setup === "undici") {
  // Node 20: the documented way to make fetch use HTTPS_PROXY (docs/guides/clients.md).
  const { EnvHttpProxyAgent, setGlobalDispatcher } = await import("undici");
  setGlobalDispatcher(new EnvHttpProxyAgent());
}
const forward = Boolean(process.env.HTTPS_PROXY);
const body = JSON.parse(readFileSync(bodyPath, "utf8"));
let text = "";
try {
  if (provider === "openai") {
    const { default: OpenAI } = await import("openai");
    const baseURL = (forward ? "https://api.openai.com" : process.env.REPLAYPROXY_URL) + "/v1";
    const client = new OpenAI({ apiKey: "sk-test", baseURL, maxRetries: 0, timeout: 15000 });
    for await (const chunk of await client.chat.completions.create(body)) {
      if (chunk.choices.length) text += chunk.choices[0].delta.content ?? "";
    }
  } else {
    const { default: Anthropic } = await import("@anthropic-ai/sdk");
    const baseURL = forward ? "https://api.anthropic.com" : process.env.REPLAYPROXY_URL;
    const client = new Anthropic({ apiKey: "sk-ant-test", baseURL, maxRetries: 0, timeout: 15000 });
    for await (const event of await client.messages.create(body)) {
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") {
        text += event.delta.text;
      }
    }
  }
  console.log("TEXT " + JSON.stringify(text));
} catch (e) {
  console.log("ERROR " + e.constructor.name + " " + JSON.stringify(String(e.message)));
}
