"""Drives the HR MCP server (argv[1]) over stdio with the official Python SDK (`mcp`).
Exits non-zero, with the reason, if anything differs from what the server promises."""
import asyncio
import json
import os
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(binary: str) -> None:
    env = dict(os.environ, HR_NIK="K-002", HR_PERAN="karyawan", HR_DB=os.path.join(tempfile.mkdtemp(), "hr.sqlite"))
    params = StdioServerParameters(command=binary, args=[], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            info = await session.initialize()
            assert info.serverInfo.name == "hr-assistant", info.serverInfo
            listed = await session.list_tools()
            names = [t.name for t in listed.tools]
            assert names == ["cek-sisa-cuti", "cek-riwayat-cuti", "cek-status-reimburse", "ajukan-cuti"], names
            reimburse = await session.call_tool("cek-status-reimburse", {})
            assert not reimburse.isError, reimburse
            assert reimburse.structuredContent == {"status": "ok", "daftar": []}, reimburse.structuredContent
            assert json.loads(reimburse.content[0].text) == reimburse.structuredContent
            bad = await session.call_tool("cek-sisa-cuti", {"nik": "K-001"})
            assert bad.isError, bad
            assert "`nik` is not a known field" in bad.content[0].text, bad.content[0].text
    print(f"python mcp client: {len(names)} tools listed, 2 calls checked")


asyncio.run(main(sys.argv[1]))
