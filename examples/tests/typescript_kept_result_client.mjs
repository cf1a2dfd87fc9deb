// Reads a cut result's whole with the official TypeScript client (v2, @modelcontextprotocol/client)
// at its default settings, in one protocol era:
//   node typescript_kept_result_client.mjs MODE CALL_URL READ_URL BOUND LENGTH EMPLOYEES
// MODE is `legacy` (the 2025-11-25 session) or a version to pin (`2026-07-28`). The call runs on
// CALL_URL, the link is read on READ_URL. Exits non-zero, with the reason, on any difference.
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [mode, callUrl, readUrl, bound, length, employees] = process.argv.slice(2);
const connect = async (url) => {
  const client = new Client(
    { name: "kept-result-check", version: "1.0.0" },
    { versionNegotiation: { mode: mode === "legacy" ? "legacy" : { pin: mode } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
};
const caller = await connect(callUrl);
const result = await caller.callTool({
  name: "ekspor-kehadiran",
  arguments: { tahun: 2026, karyawan: Number(employees) },
});
assert.ok(!result.isError, JSON.stringify(result).slice(0, 500));
const [text, link] = result.content;
assert.equal(text.type, "text");
assert.equal(link.type, "resource_link");
assert.ok(text.text.includes(link.uri), text.text.slice(Number(bound)));
await caller.close();
const reader = await connect(readUrl);
const whole = await reader.readResource({ uri: link.uri });
const body = whole.contents[0].text;
assert.equal(Buffer.byteLength(body), Number(length));
assert.ok(body.startsWith(text.text.slice(0, Number(bound))), "the text shown is the start of the whole");
assert.equal(JSON.parse(body).length, Number(employees) * 28);
await reader.close();
console.log(`typescript client v2 (${mode}): a ${Number(length).toLocaleString("en")}-byte result read whole on the other replica`);
