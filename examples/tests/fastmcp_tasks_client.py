"""FastMCP's client (PyPI) with fastmcp-tasks, the io.modelcontextprotocol/tasks extension's
client nobody here wrote, drives Sari's leave booking as a task across two HR replicas on one
PostgreSQL: made on replica A, polled on B until it waits for approval, another employee's
poll refused, approved and its result fetched through B (fastmcp-tasks answers the approval
question with the client's elicitation handler and sends `tasks/update`), then read again on A.
A second booking goes through plain `call_tool`, which fastmcp-tasks drives to the end itself,
and a third is cancelled while it waits. Prints what it saw as JSON.

    python fastmcp_tasks_client.py URL_A URL_B SARI_TOKEN BUDI_TOKEN
"""
import asyncio
import json
import sys

import fastmcp_tasks  # noqa: F401 (registers the tasks extension on every Client)
from fastmcp import Client
from fastmcp_tasks import ToolTask, call_tool_task

URL_A, URL_B, SARI, BUDI = sys.argv[1:5]


async def approve(message, response_type, params, context):
    assert "ajukan-cuti" in message, message
    return {"approve": True}


async def main():
    seen = {}
    async with (
        Client(URL_A, auth=SARI, elicitation_handler=approve) as a,
        Client(URL_B, auth=SARI, elicitation_handler=approve) as b,
        Client(URL_B, auth=BUDI) as budi,
    ):
        task = await call_tool_task(a, "ajukan-cuti", {"mulai": "2027-08-02", "hari": 1})
        seen["created"] = (await task.status()).status
        on_b = ToolTask(b, "ajukan-cuti", task.create_result)
        parked = await on_b.wait(state="input_required", timeout=20)
        seen["parked"] = parked.status
        try:
            await ToolTask(budi, "ajukan-cuti", task.create_result).status()
            seen["budi"] = "answered"
        except Exception as e:  # the JSON-RPC error an unknown task gets
            seen["budi"] = str(e)
        result = await on_b.result()
        seen["result_error"] = result.is_error
        seen["result"] = result.structured_content
        seen["on_a"] = (await task.status()).status

        plain = await a.call_tool("ajukan-cuti", {"mulai": "2027-08-09", "hari": 1})
        seen["plain_error"] = plain.is_error

        waiting = await call_tool_task(a, "ajukan-cuti", {"mulai": "2027-08-16", "hari": 1})
        await waiting.wait(state="input_required", timeout=20)
        await ToolTask(b, "ajukan-cuti", waiting.create_result).cancel()
        seen["cancelled"] = (await waiting.wait(timeout=20)).status
    print(json.dumps(seen))


asyncio.run(main())
