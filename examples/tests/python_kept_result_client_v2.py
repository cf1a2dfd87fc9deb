"""Reads a cut result's whole with the official Python SDK's current release (`mcp` 2.x), at its
default settings (a server-sent event capped at 1 MiB), in one protocol era: argv = mode
(`legacy`: the 2025-11-25 session; `2026-07-28`), the URL of the replica that runs the call, the
URL of the replica that reads the link, the bound, the whole result's length in bytes, the
number of employees to export. Exits non-zero, with the reason, if anything differs."""
import asyncio
import json
import sys

from mcp import Client


async def main(mode: str, call_url: str, read_url: str, bound: int, length: int, employees: int) -> None:
    async with Client(call_url, mode=mode) as client:
        result = await client.call_tool("ekspor-kehadiran", {"tahun": 2026, "karyawan": employees})
        assert not result.is_error, result
        assert result.structured_content is None, "a cut result carries no structuredContent"
        text, link = result.content
        assert text.type == "text" and link.type == "resource_link", result.content
        shown = text.text[:bound]
        assert str(link.uri) in text.text, (text.text[bound:], link.uri)
    # Read on the other replica, in a connection of its own.
    async with Client(read_url, mode=mode) as client:
        whole = await client.read_resource(str(link.uri))
        body = whole.contents[0].text
        assert len(body.encode()) == length, (len(body.encode()), length)
        assert body.startswith(shown), "the text shown is the start of the whole"
        rows = json.loads(body)
        assert len(rows) == employees * 28, len(rows)
    print(f"python mcp 2.x ({mode}): a {length:,}-byte result read whole through its link on the other replica")


asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])))
