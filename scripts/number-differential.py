#!/usr/bin/env python3
"""A differential client: the official MCP Python SDK over stdio against the probe server
(`number-probe`: every integer type, a float, `page` with an `Option<u64>` offset bounded to
0..=2^53-1 and a `u8` limit with a default), every argument checked first against the tool's
listed `inputSchema` by `jsonschema` (Draft 2020-12), reading the JSON text the SDK sends as
JSON means it (an integral number is that integer exactly, however it is spelled; a number
with a fraction is never an integer). The server must accept exactly what the listed schema
accepts, and a tool must receive exactly the value that was sent (the probe tools echo it: an
integer's digits, a float's bits).

    python3 scripts/number-differential.py --random 2000 [--seed N] [--server PATH]

Cases: the boundaries of every numeric property (each bound, one past it, 2^52, 2^53, 2^63 and
2^64 of both signs, each as an integer and as floats near it, `x + 0.5` among them), `null`,
wrong types, a property left out, one too many; then `--random N` arguments built from the same
pieces. Exits non-zero when any case disagrees, naming the first ones. Needs the packages of
scripts/requirements.txt (`PYTHONPATH=$(bash scripts/provision.sh python)`).
"""
import argparse
import asyncio
import json
import math
import os
import random
import struct
import sys
from decimal import Decimal

import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def near(n):
    """Numbers near the integer n: it and its neighbours, and floats near it."""
    out = [n - 1, n, n + 1]
    for m in (n - 1, n, n + 1):
        f = float(m)
        if math.isfinite(f):
            out += [f, f + 0.5, f - 0.5, math.nextafter(f, math.inf), math.nextafter(f, -math.inf)]
    return out


def anchors(prop):
    """The interesting numbers of one property's schema."""
    points = [0, 1, -1]
    for k in (52, 53, 63, 64):
        points += [2**k, -(2**k)]
    for key in ("minimum", "maximum"):
        if key in prop:
            v = prop[key]
            points.append(int(v) if float(v).is_integer() else v)
    out = []
    for p in points:
        if isinstance(p, int):
            out += near(p)
        else:
            out += [p, math.nextafter(p, math.inf), math.nextafter(p, -math.inf)]
    return out


def values(prop):
    numeric = [v for v in anchors(prop) if not (isinstance(v, float) and not math.isfinite(v))]
    return numeric + [None, "25", True, [1], {"n": 1}, 2.5e-324 * 2, 1e300]


def types_of(prop):
    t = prop.get("type")
    return set(t) if isinstance(t, list) else {t}


def cases_of(tool, rng, count):
    schema = tool.inputSchema
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    base = {}
    for name, prop in props.items():
        if name in required:
            base[name] = 1 if "integer" in types_of(prop) else 0.5
    out = [dict(base)]
    for name, prop in props.items():
        for v in values(prop):
            args = dict(base)
            args[name] = v
            out.append(args)
        if name not in required:
            args = dict(base)
            args.pop(name, None)
            out.append(args)
    out.append({**base, "extra": 1})
    pieces = {name: values(prop) for name, prop in props.items()}
    for _ in range(count):
        args = {}
        for name in props:
            roll = rng.random()
            if roll < 0.1 and name not in required:
                continue
            args[name] = rng.choice(pieces[name])
        if rng.random() < 0.03:
            args["extra"] = rng.choice(pieces[next(iter(props))]) if props else 1
        out.append(args)
    return out


class Fraction(float):
    """A number written with a fraction: never an integer, whatever the nearest double is."""

    def is_integer(self):
        return False


def number(text):
    """A JSON number with a fraction or an exponent, as JSON means it: an integral value as that
    integer exactly (`9.223372036854776e+18` is 9223372036854776000, not the double nearest to
    it), anything else as its nearest double, never taken for an integer."""
    d = Decimal(text)
    return int(d) if d == d.to_integral_value() else Fraction(text)


def as_sent(case):
    """The arguments as the server reads the JSON text the SDK sends."""
    return json.loads(json.dumps(case), parse_float=number)


def echoed(text):
    """The string a probe tool returned, as a result's text carries it (over MCP a scalar
    output is wrapped: `{"result": ...}`)."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, dict) and "result" in value:
        value = value["result"]
    return value if isinstance(value, str) else text


def received(tool_name, text):
    """What the probe tool echoed, per property."""
    if tool_name == "page":
        offset, limit = text.split(" ")
        return {"offset": None if offset == "none" else int(offset), "limit": int(limit)}
    if tool_name in ("echo_f64", "echo_ratio"):
        return {"x": text}
    return {"n": int(text)}


def sent_matches(tool_name, args, schema, got):
    """Whether the tool got exactly what was sent (defaults filled where the schema has them)."""
    props = schema.get("properties", {})
    for name, prop in props.items():
        want = args.get(name, prop.get("default"))
        have = got.get(name)
        if tool_name in ("echo_f64", "echo_ratio"):
            # By value: -0.0 and 0.0 are one number to JSON Schema.
            if float(want) != struct.unpack("<d", struct.pack("<Q", int(have)))[0]:
                return False
        elif want is None:
            if have is not None:
                return False
        elif int(want) != want or int(want) != have:
            return False
    return True


async def run(args):
    server = args.server or os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debug", "number-probe")
    rng = random.Random(args.seed)
    params = StdioServerParameters(command=server, args=[])
    disagreements, total = [], 0
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            per_tool = max(1, args.random // len(tools))
            for tool in tools:
                validator = jsonschema.Draft202012Validator(tool.inputSchema)
                for case in cases_of(tool, rng, per_tool):
                    total += 1
                    sent = as_sent(case)
                    valid = validator.is_valid(sent)
                    try:
                        result = await session.call_tool(tool.name, case)
                        accepted = not result.isError
                        text = result.content[0].text if result.content else ""
                    except McpError as e:
                        accepted, text = False, str(e)
                    if accepted != valid:
                        disagreements.append(f"{tool.name} {json.dumps(case)}: schema {'accepts' if valid else 'refuses'}, server {'accepted' if accepted else 'refused'} ({text[:120]})")
                        continue
                    if accepted:
                        try:
                            got = received(tool.name, echoed(text))
                        except ValueError:
                            got = None
                        if got is None or not sent_matches(tool.name, sent, tool.inputSchema, got):
                            disagreements.append(f"{tool.name} {json.dumps(case)}: accepted, but the tool got {text[:120]}")
    print(f"{total} cases, {total - len(disagreements)} agree, {len(disagreements)} disagree (seed {args.seed})")
    for d in disagreements[:20]:
        print("  " + d)
    return 1 if disagreements else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--random", type=int, default=2000, help="random argument sets (spread over the tools)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--server", help="the number-probe program (default: target/debug/number-probe)")
    sys.exit(asyncio.run(run(ap.parse_args())))


if __name__ == "__main__":
    main()
