"""Drives the conformance fixture server (argv[1], `--stdio`) with the official Python SDK (`mcp`):
a call with a progressToken gets the tool's progress notifications in order, a call without one
gets none, a blocking tool approved by the person runs to its end, and a cancelled call's sync
tool stops (the count it keeps stops moving).
Exits non-zero, with the reason, if anything differs."""
import asyncio
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


async def main(binary: str) -> None:
    params = StdioServerParameters(command=binary, args=["--stdio"])

    async def approve(context, params):
        return types.ElicitResult(action="accept", content={"approve": True})

    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=approve) as session:
            await session.initialize()

            seen = []

            async def on_progress(progress, total, message):
                seen.append((progress, total, message))

            done = await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
            assert not done.isError, done
            assert seen == [(0.0, 100.0, "0%"), (50.0, 100.0, "50%"), (100.0, 100.0, "100%")], seen

            # Without a progressToken: the same tool, no notification (the SDK would fail on an
            # unknown token; nothing arrives at all).
            seen.clear()
            done = await session.call_tool("test_tool_with_progress", {})
            assert not done.isError and seen == [], (done, seen)

            # A blocking tool that ran after the person approved it, with a progressToken: it is not
            # told it was cancelled (it takes every step).
            seen.clear()
            approved = await session.call_tool("count_after_approval", {"steps": 20}, progress_callback=on_progress)
            assert not approved.isError and approved.structuredContent == {"result": 20}, approved

            # Cancel a running sync tool once it has reported twice.
            steps = []
            two = anyio.Event()

            async def on_step(progress, total, message):
                steps.append(progress)
                if len(steps) == 2:
                    two.set()

            request_id = session._request_id  # the id the next request gets
            async with anyio.create_task_group() as tg:
                async def call():
                    try:
                        await session.call_tool("count_until_cancelled", {"steps": 10000},
                                                progress_callback=on_step)
                    except Exception:
                        pass

                tg.start_soon(call)
                with anyio.fail_after(10):
                    await two.wait()
                await session.send_notification(types.ClientNotification(types.CancelledNotification(
                    params=types.CancelledNotificationParams(requestId=request_id, reason="test"))))
                await anyio.sleep(0.3)
                tg.cancel_scope.cancel()
            assert steps == sorted(steps) and len(steps) == len(set(steps)), steps

            async def counted():
                r = await session.call_tool("counted", {})
                return r.structuredContent["result"]

            first = await counted()
            await anyio.sleep(0.5)
            second = await counted()
            assert first == second, f"the cancelled tool kept counting: {first} then {second}"
            assert 2 <= first < 1000, first
    print(f"python mcp client: progress in order; cancelled after {first} steps, which stayed {second}")


asyncio.run(main(sys.argv[1]))
