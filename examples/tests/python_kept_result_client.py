"""Calls a tool whose result is over its bound (`max_result_chars`) with the official Python
SDK (`mcp`) over Streamable HTTP: argv = URL, the bound, the whole result's length in bytes.
The text is the bound's worth plus the notice, a resource_link names the whole, and reading it
returns every byte. Exits non-zero, with the reason, if anything differs."""
import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client


async def main(url: str, bound: int, length: int) -> None:
    async with streamablehttp_client(url) as (read, write, _):
        async with ClientSession(read, write) as session:
            info = await session.initialize()
            assert info.capabilities.resources is not None, info.capabilities
            listed = await session.list_tools()
            assert listed.tools[0].outputSchema is None, listed.tools[0]
            result = await session.call_tool("ekspor-kehadiran", {"tahun": 2026, "karyawan": 1000})
            assert not result.isError, result
            assert result.structuredContent is None, "a cut result carries no structuredContent"
            text, link = result.content
            assert text.type == "text" and link.type == "resource_link", result.content
            shown, notice = text.text[:bound], text.text[bound:]
            assert f"{length:,}".replace(",", "") in notice.replace(",", ""), notice
            assert str(link.uri) in notice, (notice, link.uri)
            assert len(text.text) < bound + 400, len(text.text)
            whole = await session.read_resource(link.uri)
            body = whole.contents[0].text
            assert len(body.encode()) == length, (len(body.encode()), length)
            assert body.startswith(shown), "the text shown is the start of the whole"
            rows = json.loads(body)
            assert len(rows) == 28_000 and rows[-1]["nik"] == "K-0999", rows[-1]
            try:
                await session.read_resource("tool-result://" + "0" * 32)
                raise AssertionError("an unknown result was read")
            except Exception as e:  # the server answers with an error
                assert "no result is kept" in str(e), e
    print(f"python mcp client: a {length:,}-byte result cut to {bound:,} characters, read whole through its link")


asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
