"""Drives the gateway example over Streamable HTTP with the official Python SDK (`mcp`):
argv = URL, an access token with every gateway scope. The SDK parses the whole tools/list
(local, stdio-remote and HTTP-remote tools) and each result; a remote tool's progress reaches
this client through the gateway. Exits non-zero, with the reason, if
anything differs from what the gateway promises."""
import asyncio
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client


async def main(url: str, token: str) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with streamablehttp_client(url, headers=headers) as (read, write, _):
        async with ClientSession(read, write) as session:
            info = await session.initialize()
            assert info.serverInfo.name == "tool-runtime-gateway", info.serverInfo
            names = [t.name for t in (await session.list_tools()).tools]
            for expected in ["pesan-katering", "hr_cek-sisa-cuti", "remote_echo"]:
                assert expected in names, names
            local = await session.call_tool("pesan-katering", {"jumlah_peserta": 25})
            assert not local.isError and local.structuredContent["total_porsi"] == 30, local
            hr = await session.call_tool("hr_cek-sisa-cuti", {})
            assert not hr.isError, hr
            echo = await session.call_tool("remote_echo", {"message": "dari python"})
            assert not echo.isError and "dari python" in echo.content[0].text, echo
            bad = await session.call_tool("remote_get-sum", {"a": "25", "b": 5})
            assert bad.isError and "`a`" in bad.content[0].text, bad
            seen = []

            async def on_progress(progress, total, message):
                seen.append((progress, total))

            long = await session.call_tool("remote_trigger-long-running-operation",
                                           {"duration": 0.3, "steps": 3},
                                           progress_callback=on_progress)
            assert not long.isError, long
            assert seen == [(1, 3), (2, 3), (3, 3)], seen
    print(f"python sdk client: {len(names)} tools listed, 5 calls checked, remote progress passed on")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
