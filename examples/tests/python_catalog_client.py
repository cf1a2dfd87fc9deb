"""Drives a gateway whose HR server is deferred, over Streamable HTTP, with the official Python
SDK (`mcp`): argv = URL. tools/list shows the local tools, the search tool and call_tool (whose
description counts the tools behind it); a search finds an HR tool with its input schema;
call_tool and the tool's own name both call it; a tool the caller may not call is never found
and never runs. Exits non-zero, with the reason, if anything differs."""
import asyncio
import json
import re
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client


def found(result) -> list:
    assert not result.isError, result
    return json.loads(result.content[0].text)["found"]


async def main(url: str) -> None:
    async with streamablehttp_client(url) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = (await session.list_tools()).tools
            names = [t.name for t in listed]
            assert names == ["pesan-katering", "cuaca-terkini", "search_tools", "call_tool"], names
            call_tool = listed[-1]
            behind = int(re.search(r"one of (\d+) more tools", call_tool.description).group(1))
            assert behind >= 4, call_tool.description  # the HR tools; not the refund

            tools = found(await session.call_tool("search_tools", {"query": "berapa sisa cuti saya"}))
            assert tools[0]["name"] == "hr_cek-sisa-cuti", tools
            assert tools[0]["input_schema"]["type"] == "object", tools[0]

            through = await session.call_tool("call_tool", {"name": "hr_cek-sisa-cuti", "arguments": {}})
            assert not through.isError, through
            direct = await session.call_tool("hr_cek-sisa-cuti", {})
            assert not direct.isError, direct
            assert through.content[0].text == direct.content[0].text, (through, direct)

            # Checked as any call: the HR tool's arguments are refused with the repair message.
            wrong = await session.call_tool("call_tool", {"name": "hr_cek-sisa-cuti", "arguments": {"nik": "K-002"}})
            assert wrong.isError and "`nik`" in wrong.content[0].text, wrong
            nameless = await session.call_tool("call_tool", {"arguments": {}})
            assert nameless.isError and "needs `name`" in nameless.content[0].text, nameless

            refunds = found(await session.call_tool("search_tools", {"query": "refund a customer payment"}))
            assert all(t["name"] != "kembalikan-dana" for t in refunds), refunds
            try:
                refused = await session.call_tool("call_tool", {"name": "kembalikan-dana", "arguments": {"nomor": "PAY-1"}})
                assert refused.isError, refused
            except Exception as e:  # an unknown tool is a JSON-RPC error
                assert "kembalikan-dana" in str(e), e
    print(f"python mcp client: {len(names)} tools listed, {behind} behind call_tool; found and called hr_cek-sisa-cuti both ways")


asyncio.run(main(sys.argv[1]))
