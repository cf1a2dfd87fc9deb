"""What JSON Schema says of numbers written as JSON text, decided exactly: the oracle of
tests/servers/mcp_numbers.rs.

Input (stdin): a JSON array of [kind, text] pairs, `text` a JSON number literal (or `null`).
Output (stdout): a JSON array of [valid, received] pairs: whether the schema of `kind` takes
the number, and what a tool that takes it must receive (an integer as its decimal digits, a
float as the string of its value's IEEE bits), or null when it is refused.

Integrality and integer bounds are decided on the exact decimal (Python's `decimal`): `2.5e2` is
the integer 250, `4503599627370495.5` is not an integer, however a float would round it. A
float's bounds are compared with the number's exact value when it is integral (Python compares
an int and a float exactly) and with its nearest double otherwise, which `float()` gives
correctly rounded.
"""

import json
import re
import struct
import sys
from decimal import Decimal, InvalidOperation

MAX_F64 = 1.7976931348623157e308
INTEGERS = {
    "u8": (0, 2**8 - 1),
    "i8": (-(2**7), 2**7 - 1),
    "u16": (0, 2**16 - 1),
    "i16": (-(2**15), 2**15 - 1),
    "u32": (0, 2**32 - 1),
    "i32": (-(2**31), 2**31 - 1),
    "u64": (0, 2**64 - 1),
    "i64": (-(2**63), 2**63 - 1),
    # `page`'s offset: the integers JavaScript counts exactly, or null.
    "safe": (0, 2**53 - 1),
    # `page`'s limit: no null.
    "limit": (1, 50),
}
FLOATS = {"f64": (-MAX_F64, MAX_F64), "ratio": (0.0, 1.0)}
# JSON's number syntax (RFC 8259): `Decimal` alone would also read `00`, `1.` or `+1`.
NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


def bits(x):
    return str(struct.unpack("<Q", struct.pack("<d", x))[0])


def judge(kind, text):
    if text == "null":
        return [True, None] if kind == "safe" else [False, None]
    if not NUMBER.fullmatch(text):
        return [False, None]
    try:
        d = Decimal(text)
    except InvalidOperation:
        return [False, None]
    integral = d == d.to_integral_value()
    if kind in INTEGERS:
        lo, hi = INTEGERS[kind]
        if integral and lo <= int(d) <= hi:
            return [True, str(int(d))]
        return [False, None]
    lo, hi = FLOATS[kind]
    nearest = float(text)  # correctly rounded; inf beyond the largest double
    v = int(d) if integral else nearest
    if lo <= v <= hi and nearest not in (float("inf"), float("-inf")):
        return [True, bits(nearest)]
    return [False, None]


print(json.dumps([judge(kind, text) for kind, text in json.load(sys.stdin)]))
