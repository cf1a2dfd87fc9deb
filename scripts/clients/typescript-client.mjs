// Drives an MCP server with the official TypeScript SDK client (@modelcontextprotocol/sdk), as
// the Inspector and most hosts do: `tools/list` is parsed with the SDK's schema (a tool it
// refuses fails the whole list), and each `tools/call` result's `structuredContent` is checked
// by the SDK against the tool's `outputSchema`.
//
//   node typescript-client.mjs '<plan as JSON>'
//
// The plan: {"server": {"command": "...", "args": [...], "env": {...}} or {"url": "...",
// "token": "..."}, "tools": [names listed, in order], "calls": [{"name", "arguments",
// "isError", "structuredContent"?}]}. Exits non-zero, with the reason, on any difference.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const plan = JSON.parse(process.argv[2]);
const transport = plan.server.url
  ? new StreamableHTTPClientTransport(new URL(plan.server.url), {
      requestInit: plan.server.token
        ? { headers: { authorization: `Bearer ${plan.server.token}` } }
        : {},
    })
  : new StdioClientTransport({
      command: plan.server.command,
      args: plan.server.args ?? [],
      env: { ...process.env, ...(plan.server.env ?? {}) },
      stderr: "ignore",
    });
const client = new Client({ name: "typescript-sdk-check", version: "1.0.0" });
await client.connect(transport);
const where = plan.server.url ?? `stdio ${plan.server.command}`;
const listed = await client.listTools();
const names = listed.tools.map((t) => t.name);
assert.deepEqual(names, plan.tools, `${where}: tools/list`);
for (const tool of listed.tools) {
  for (const [key, schema] of Object.entries(tool.outputSchema?.properties ?? {})) {
    assert.equal(typeof schema, "object", `${tool.name}: outputSchema property ${key}`);
  }
}
for (const call of plan.calls) {
  const result = await client.callTool({ name: call.name, arguments: call.arguments });
  assert.equal(result.isError ?? false, call.isError, `${call.name}: ${JSON.stringify(result)}`);
  if ("structuredContent" in call) {
    assert.deepEqual(result.structuredContent, call.structuredContent, call.name);
  }
}
await client.close();
console.log(`typescript sdk client (${where}): ${names.length} tools listed, ${plan.calls.length} calls checked`);
