"""Checks the spans and metric points the telemetry test's receiver decoded against
OpenTelemetry's semantic-conventions registry vendored in `semconv/` (its versions in
`semconv/SOURCE.md`): for the MCP client and server spans, the GenAI `execute_tool` span and the
three duration histograms, each attribute of a conventions namespace is one the definition
lists and is of the registry's type (an enum's value one of its members), every required
attribute is there, every conditionally required one is there when its condition holds (the
conditions this script can read from a record are in CONDITIONS; any other is listed as not
checked), `error.type` is there exactly when a span says it failed, the span's kind and name are
the ones the definition gives, and a histogram has the definition's unit.

    python semconv_check.py RECEIVED.jsonl SEMCONV_DIR SERVICE[,SERVICE...]

Prints what it checked; exits 1 with every violation found.
"""
import glob
import json
import os
import sys

import yaml

RECEIVED, ROOT, SERVICES = sys.argv[1], sys.argv[2], set(sys.argv[3].split(","))
NAMESPACES = ("gen_ai.", "mcp.", "jsonrpc.", "rpc.", "network.", "client.", "server.", "error.")
# Enums the registry leaves open (custom values allowed).
OPEN = {"error.type"}

types, groups, spans, metrics = {}, {}, {}, {}
for path in sorted(glob.glob(os.path.join(ROOT, "model", "*", "*.yaml"))):
    doc = yaml.safe_load(open(path)) or {}
    entries = list(doc.get("attributes") or [])
    for group in doc.get("groups") or []:  # the older format
        entries += [a for a in group.get("attributes") or [] if "id" in a and "type" in a]
    for a in entries:
        key = a.get("key") or a.get("id")
        if key and "type" in a:
            types[key] = a["type"]
    for group in doc.get("attribute_groups") or []:
        groups[group["id"]] = group.get("attributes") or []
    for span in doc.get("spans") or []:
        if "type" in span:
            spans[span["type"]] = span
    for metric in doc.get("metrics") or []:
        metrics[metric["name"]] = metric


def level(entry):
    got = entry.get("requirement_level", "recommended")
    return next(iter(got)) if isinstance(got, dict) else got


def resolve(entries):
    """The attributes a definition lists (refs and the groups it refers to), by key: level."""
    out = {}
    for entry in entries:
        if "ref_group" in entry:
            for key, lvl in resolve(groups[entry["ref_group"]]).items():
                out.setdefault(key, lvl)
        elif "ref" in entry:
            if entry["ref"] in out and "requirement_level" not in entry:
                continue
            out[entry["ref"]] = level(entry)
    return out


def type_error(key, value):
    t = types.get(key)
    if t is None:
        return f"{key} is not in the registry"
    if isinstance(t, dict):
        members = [m["value"] for m in t.get("members", [])]
        if key not in OPEN and value not in members:
            return f"{key}={value!r} is not one of {members}"
        return None
    want = {"string": str, "int": int, "double": float, "boolean": bool}.get(t)
    if want is not None and (not isinstance(value, want) or isinstance(value, bool) != (want is bool)):
        return f"{key}={value!r} is not a {t}"
    return None


errors, checked, unchecked = [], {}, set()

# Conditions of `conditionally_required` attributes, read from one record: the condition's
# text (as the registry words it) -> whether it holds for the record.
CONDITIONS = {
    "When the client executes a request.": lambda r: r.get("kind") == "CLIENT"
    and not r["attributes"].get("mcp.method.name", "").startswith("notifications/"),
    "When operation is related to a specific tool.": lambda r: r["attributes"].get("mcp.method.name") == "tools/call"
    or r.get("name", "").startswith("execute_tool "),
    "If and only if the operation fails.": lambda r: r.get("status") == "ERROR",
    "If the operation ended in an error.": lambda r: r.get("status") == "ERROR",
    "If `server.address` is set.": lambda r: "server.address" in r["attributes"],
    "If response contains an error code.": lambda r: False,  # not visible in a record
}


def conditions(entries):
    """The conditionally required attributes a definition lists, by key: the condition's text."""
    out = {}
    for entry in entries:
        if "ref_group" in entry:
            for key, text in conditions(groups[entry["ref_group"]]).items():
                out.setdefault(key, text)
        elif "ref" in entry:
            got = entry.get("requirement_level")
            if isinstance(got, dict) and "conditionally_required" in got:
                out[entry["ref"]] = " ".join(str(got["conditionally_required"]).split())
            elif got is not None:
                out.pop(entry["ref"], None)
    return out


def check(what, definition, attributes, record):
    allowed = resolve(definition.get("attributes") or [])
    for key, lvl in allowed.items():
        if lvl == "required" and key not in attributes:
            errors.append(f"{what}: the required {key} is missing")
    for key, text in conditions(definition.get("attributes") or []).items():
        holds = CONDITIONS.get(text)
        if holds is None:
            unchecked.add(f"{key}: {text}")
        elif holds(record) and key not in attributes:
            errors.append(f"{what}: {key} is missing ({text})")
    if record.get("signal") == "span" and "error.type" in attributes and record.get("status") != "ERROR":
        errors.append(f"{what}: error.type without the span's status ERROR")
    for key, value in attributes.items():
        if not key.startswith(NAMESPACES):
            continue
        if key not in allowed:
            errors.append(f"{what}: {key} is not an attribute of {definition.get('type') or definition.get('name')}")
        problem = type_error(key, value)
        if problem:
            errors.append(f"{what}: {problem}")


for line in open(RECEIVED):
    record = json.loads(line)
    if record["service"] not in SERVICES:
        continue
    attributes = record["attributes"]
    if record["signal"] == "span":
        kind, name = record["kind"], record["name"]
        if "mcp.method.name" in attributes and kind in ("SERVER", "CLIENT"):
            which = "mcp.server" if kind == "SERVER" else "mcp.client"
            method, tool = attributes["mcp.method.name"], attributes.get("gen_ai.tool.name")
            expected = f"{method} {tool}" if tool else method
        elif name.startswith("execute_tool "):
            which, expected = "gen_ai.execute_tool.internal", f"execute_tool {attributes.get('gen_ai.tool.name')}"
        else:
            continue
        definition = spans[which]
        what = f"{record['service']} span {name!r}"
        if kind != definition["kind"].upper():
            errors.append(f"{what}: kind {kind}, the conventions say {definition['kind']}")
        if name != expected:
            errors.append(f"{what}: the conventions name it {expected!r}")
        check(what, definition, attributes, record)
        checked[which] = checked.get(which, 0) + 1
    elif record["signal"] == "metric" and record["name"] in metrics:
        definition = metrics[record["name"]]
        if record["kind"] != definition["instrument"]:
            errors.append(f"{record['name']}: a {record['kind']}, the conventions say {definition['instrument']}")
        if str(record.get("unit")) != str(definition.get("unit")):
            errors.append(f"{record['name']}: unit {record.get('unit')!r}, the conventions say {definition.get('unit')!r}")
        check(f"{record['service']} metric {record['name']}", definition, attributes, record)
        checked[record["name"]] = checked.get(record["name"], 0) + 1

print(json.dumps(checked, sort_keys=True))
for condition in sorted(unchecked):
    print(f"not checked (a condition no record shows): {condition}")
if errors:
    print("\n".join(sorted(set(errors))))
    sys.exit(1)
