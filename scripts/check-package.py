"""The published crates packaged as `cargo publish` would, without compiling them again (the
test command and the feature checks compiled every crate already): `cargo package --no-verify`
checks each manifest and writes each `.crate`; then each package must hold every file its build
reads: every source file of the crate tracked by git, and every file named by `include_str!`,
`include_bytes!` or `#[path]`. What `cargo publish --dry-run` would find by compiling the unpacked
crates, in seconds instead of minutes. Usage: python3 scripts/check-package.py"""

import json
import pathlib
import re
import subprocess
import sys

CRATES = ["tool-runtime-macros", "tool-runtime", "tool-runtime-mcp", "tool-runtime-sqlite",
          "tool-runtime-postgres", "tool-runtime-rig",
          "tool-runtime-otel"]
root = pathlib.Path(__file__).resolve().parent.parent
flags = [a for c in CRATES for a in ("-p", c)]
subprocess.run(["cargo", "package", "-q", "--no-verify", "--allow-dirty", *flags], cwd=root, check=True)

meta = subprocess.run(["cargo", "metadata", "-q", "--format-version", "1", "--no-deps"], cwd=root,
                      check=True, capture_output=True, text=True).stdout
dirs = {p["name"]: pathlib.Path(p["manifest_path"]).parent for p in json.loads(meta)["packages"]}

INCLUDED = re.compile(r'(?:include_str|include_bytes)!\(\s*"([^"]+)"\s*\)|^\s*#\[path\s*=\s*"([^"]+)"\]', re.M)
missing = []
for crate in CRATES:
    here = dirs[crate]
    listed = set(subprocess.run(["cargo", "package", "--list", "--allow-dirty", "-p", crate], cwd=root,
                                check=True, capture_output=True, text=True).stdout.split())
    tracked = subprocess.run(["git", "ls-files", "src"], cwd=here, check=True, capture_output=True,
                             text=True).stdout.split()
    needed = set(tracked)
    for source in (here / "src").rglob("*.rs"):
        for m in INCLUDED.finditer(source.read_text()):
            target = (source.parent / (m.group(1) or m.group(2))).resolve()
            if target.exists():
                needed.add(str(target.relative_to(here)))
    for path in sorted(needed - listed):
        missing.append(f"{crate}: {path} is read by the build but not in the package")
    print(f"{crate}: {len(listed)} files packaged, {len(needed)} read by the build, all there"
          if not any(m.startswith(crate + ":") for m in missing) else f"{crate}: FAILED")
if missing:
    print("\n".join(missing), file=sys.stderr)
    sys.exit(1)
