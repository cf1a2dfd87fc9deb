"""Drives the HR MCP server over Streamable HTTP with the official Python SDK (`mcp`), with an
access token per employee: argv = URL, token of K-001 (Sari), token of K-002 (Budi).
Exits non-zero, with the reason, if anything differs from what the server promises."""
import asyncio
import sys

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client


async def reimbursements(url: str, token: str) -> dict:
    headers = {"Authorization": f"Bearer {token}"}
    async with streamablehttp_client(url, headers=headers) as (read, write, _):
        async with ClientSession(read, write) as session:
            info = await session.initialize()
            assert info.serverInfo.name == "hr-assistant", info.serverInfo
            result = await session.call_tool("cek-status-reimburse", {})
            assert not result.isError, result
            return result.structuredContent


async def main(url: str, sari: str, budi: str) -> None:
    mine = await reimbursements(url, sari)
    assert [r["id"] for r in mine["daftar"]] == ["R-88"], mine
    theirs = await reimbursements(url, budi)
    assert theirs == {"status": "ok", "daftar": []}, theirs
    async with httpx.AsyncClient() as client:
        refused = await client.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                    headers={"Accept": "application/json, text/event-stream"})
        assert refused.status_code == 401, refused
        assert "resource_metadata=" in refused.headers["www-authenticate"], refused.headers
    print("python mcp client over HTTP: two employees each saw their own data; no token: 401")


asyncio.run(main(*sys.argv[1:4]))
