#!/usr/bin/env bash
# Builds a new crate outside the workspace from the README's "Using it in your project" lines
# (tool-runtime taken from this checkout, as it is not published yet; everything else from
# crates.io) and runs the README's first example in it.
. "$(dirname "$0")/lib/prelude.sh"
work="$(mktemp -d)"
on_exit 'rm -rf "$work"'
cd "$work"
cargo new -q --name outside app
cd app
# The README's `cargo add` lines, run as written except that the git repository is this checkout.
python3 - "$root/README.md" <<'PY' > add.sh
import re, sys
readme = open(sys.argv[1]).read()
section = readme[readme.index("## Using it in your project"):]
block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
for line in block.splitlines():
    if line.startswith("cargo add"):
        print(re.sub(r"tool-runtime(\S*) --git \S+", lambda m: f"tool-runtime{m.group(1)} --path $ROOT/tool-runtime{m.group(1)}", line))
PY
ROOT="$root" bash -e -x add.sh 2>&1 | grep '^+' || true
grep -q 'tool-runtime' Cargo.toml
# The README's first example (its first ```rust block) as the body of `main`.
python3 - "$root/README.md" src/main.rs <<'PY'
import re, sys
readme = open(sys.argv[1]).read()
block = re.search(r"```rust\n(.*?)```", readme, re.S).group(1)
uses = [l for l in block.splitlines() if l.startswith("use ")]
items, body, depth = [], [], 0
lines = [l for l in block.splitlines() if not l.startswith("use ")]
# Items (derives, structs, enums, fns) go at the top level; the statements after them into main.
split = max(i for i, l in enumerate(lines) if l.startswith("}")) + 1
items, body = lines[:split], lines[split:]
open(sys.argv[2], "w").write("\n".join(uses + items) + "\n\nfn main() {\n" + "\n".join("    " + l for l in body) + "\n    println!(\"outside crate: ok\");\n}\n")
PY
# The workspace's target dir: what the outside crate shares with the workspace (the same
# versions and features) is not compiled twice.
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}" cargo run -q
