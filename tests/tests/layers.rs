//! The workspace's architecture, kept: each crate's modules import downward only, and no source
//! file imports a file that imports it back.
//!
//! **Layers.** A crate's modules (those its `lib.rs` declares) are ordered in layers, lowest
//! first; a module may name (`crate::module`) only modules of the layers below its own, so each
//! layer can be read and changed with only the layers below it in mind. Naming a root
//! re-export (`crate::ToolSet`) is refused too: it would hide which module a name comes from.
//!
//! **Files.** Within any crate of the workspace, a file's imports (`crate::…` and `super::…`
//! paths, resolved to the file that holds them) form no circle. A directory module's `mod.rs`
//! is the entrance to its files: it declares them and may use them, and they may use what it
//! holds; that is not counted as a circle. Two files beside each other, or a file and one in
//! another module, that import each other are.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The core's layers, lowest first.
const CORE: &[&[&str]] = &[
    // The boxed future; which Rust types may be arguments; canonical schemas.
    &["future"],
    &["arg"],
    &["schema"],
    // Validation: schemas compiled into rules, values checked against them.
    &["validate"],
    // The host's data (grants, annotations, content, a call's progress handle), and the
    // approval model; a tool's commit point.
    &["host", "approval", "progress", "commit"],
    &["task"],
    // What a call produced when it produced no value; the words the model reads; the
    // questions a tool asks the person.
    &["error"],
    &["wording", "ask"],
    // A call's context, arguments and output.
    &["context", "arguments", "output"],
    // Arguments decoded into parameters.
    &["decode"],
    // What runs a tool defined at run time.
    &["handler"],
    // A tool, a call, a tool set.
    &["tool"],
    // What records a call beside `tracing` (a telemetry crate's observer).
    &["observe"],
    &["call", "define"],
    // Which tools a request sends only once the model found them.
    &["defer"],
    &["set"],
    // The model APIs, one file each.
    &["provider"],
    // What is built on a tool set and the model APIs.
    &["export", "json", "structured"],
    &["agent", "choice", "table", "tokens", "search"],
    // Stand-in models for tests (feature `testing`).
    &["testing"],
    &["lint"],
    &["docs"],
];

/// The MCP crate's layers, lowest first.
const MCP: &[&[&str]] = &[
    // Who calls; plain data a request carries (arguments cut out of its text, answers to
    // questions); URIs; trace context; kept results' names.
    &["caller", "uri", "trace", "ask", "arguments", "kept"],
    // A request as the server reads it; the limits; the tasks extension's rules; the task
    // runs of this process.
    &["incoming", "limits", "extension", "running"],
    // Spans and metrics; results in MCP's shapes; progress forwarded to the client; the lanes
    // sync tools run on.
    &["telemetry", "export", "progress", "pace"],
    // Approval and questions in the protocol; one call run where it belongs.
    &["approval", "run"],
    // The server's state: the tool set, the caller's context, limits, the task store.
    &["server"],
    // Tasks: made, run, polled, cancelled.
    &["task"],
    // Another person's approval desk.
    &["desk"],
    // `tasks/update`, and `tools/call` (which may make a task).
    &["update", "call"],
    // rmcp's handler: every method, in its span.
    &["handler"],
    // The transports.
    &["stdio", "http"],
    // OAuth on HTTP.
    &["oauth"],
    // Remote servers' tools, and the gateway that serves them.
    &["remote"],
    &["gateway"],
];

/// The macro crate's layers, lowest first.
const MACROS: &[&[&str]] = &[
    // serde_derive's way of reading attributes and types, and this crate's checks on them.
    &["internals"],
    // Markdown tables for the generated docs.
    &["table"],
    // One argument or field.
    &["field"],
    // The generated documentation.
    &["doc"],
    // `#[tool]` and `#[tools]`, then `#[derive(ToolArg)]`.
    &["expand"],
    &["derive"],
];

/// A crate's sources: path under `src/` (with `/`) to text.
type Sources = BTreeMap<String, String>;

fn read(src: &Path) -> Sources {
    fn walk(root: &Path, dir: &Path, out: &mut Sources) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let name = path.strip_prefix(root).unwrap().to_string_lossy();
                let text = std::fs::read_to_string(&path).unwrap();
                out.insert(name.replace('\\', "/"), text);
            }
        }
    }
    let mut out = Sources::new();
    walk(src, src, &mut out);
    out
}

/// The code of a file, without comments and without a trailing `#[cfg(test)] mod tests`.
fn code(source: &str) -> String {
    let mut out = String::new();
    let mut lines = source.lines().peekable();
    while let Some(line) = lines.next() {
        // A test module at the end of the file imports what it tests.
        if line.trim() == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod tests"))
        {
            break;
        }
        out.push_str(line.find("//").map_or(line, |i| &line[..i]));
        out.push('\n');
    }
    out
}

fn ident(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The paths a file names after `prefix` (`crate` or `super`), each as its segments; a group
/// (`crate::a::{b, c::D}`) gives one path per member.
fn paths(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut rest = code;
    let start = format!("{prefix}::");
    while let Some(i) = rest.find(&start) {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + start.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let mut segments = Vec::new();
        let mut tail = rest;
        loop {
            if let Some(group) = tail.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for item in group[..end].split(',') {
                    let item = item.trim();
                    let mut path = segments.clone();
                    for part in item.split("::") {
                        let name = ident(part.trim());
                        if name.is_empty() || name == "self" {
                            break;
                        }
                        path.push(name);
                    }
                    found.push(path);
                }
                break;
            }
            let name = ident(tail);
            if name.is_empty() {
                found.push(segments);
                break;
            }
            tail = &tail[name.len()..];
            segments.push(name);
            match tail.strip_prefix("::") {
                Some(more) => tail = more,
                None => {
                    found.push(segments);
                    break;
                }
            }
        }
    }
    found
}

/// A file's module path: `http/body.rs` is `[http, body]`, `http/mod.rs` `[http]`, `lib.rs` `[]`.
fn module_of(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_owned)
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The file of the longest prefix of `path` that is a module of `sources`.
fn file_of<'a>(modules: &'a BTreeMap<Vec<String>, String>, path: &[String]) -> Option<&'a str> {
    (1..=path.len())
        .rev()
        .find_map(|n| modules.get(&path[..n]))
        .map(String::as_str)
}

/// Which files each file imports (a directory module's entrance using its own files left out).
fn file_imports(sources: &Sources) -> BTreeMap<&str, BTreeSet<&str>> {
    let modules: BTreeMap<Vec<String>, String> =
        sources.keys().map(|f| (module_of(f), f.clone())).collect();
    let mut graph = BTreeMap::new();
    for (file, source) in sources {
        let code = code(source);
        let me = module_of(file);
        let mut parent = me.clone();
        parent.pop();
        let mut targets = BTreeSet::new();
        let absolute = paths(&code, "crate").into_iter().map(|p| p.to_vec());
        let relative = paths(&code, "super").into_iter().map(|p| {
            // `super::super::x` is the grandparent's `x`.
            let ups = p.iter().take_while(|s| *s == "super").count();
            let base = &parent[..parent.len().saturating_sub(ups)];
            base.iter()
                .cloned()
                .chain(p[ups..].iter().cloned())
                .collect::<Vec<_>>()
        });
        for path in absolute.chain(relative) {
            if let Some(target) = file_of(&modules, &path)
                && target != file
                && !module_of(target).is_empty()
                && !module_of(target).starts_with(&me)
            {
                targets.insert(sources.get_key_value(target).unwrap().0.as_str());
            }
        }
        graph.insert(file.as_str(), targets);
    }
    graph
}

/// The circles of the file graph: each strongly connected set of more than one file.
fn circles(sources: &Sources) -> Vec<Vec<String>> {
    let graph = file_imports(sources);
    let reaches = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from];
        while let Some(f) = stack.pop() {
            for &t in &graph[f] {
                if seen.insert(t) {
                    stack.push(t);
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&str, BTreeSet<&str>> = graph.keys().map(|&f| (f, reaches(f))).collect();
    let mut circles: Vec<Vec<String>> = Vec::new();
    for &f in graph.keys() {
        let circle: Vec<String> = graph
            .keys()
            .filter(|&&g| g == f || (reach[f].contains(g) && reach[g].contains(f)))
            .map(|g| g.to_string())
            .collect();
        if circle.len() > 1 && !circles.contains(&circle) {
            circles.push(circle);
        }
    }
    circles
}

/// The modules `lib.rs` declares (the hidden `__private` re-exports left out).
fn declared(lib: &str) -> Vec<String> {
    code(lib)
        .lines()
        .map(str::trim)
        .filter_map(|l| {
            l.strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("mod "))
        })
        .filter_map(|l| l.strip_suffix(';'))
        .filter(|m| *m != "__private")
        .map(str::to_owned)
        .collect()
}

/// What breaks the layers: a module outside them, an import that does not go down.
fn against_layers(sources: &Sources, layers: &[&[&str]]) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut declared = declared(&sources["lib.rs"]);
    let mut layered: Vec<String> = layers
        .iter()
        .flat_map(|l| l.iter())
        .map(|m| m.to_string())
        .collect();
    declared.sort();
    layered.sort();
    if declared != layered {
        wrong.push(format!(
            "lib.rs declares {declared:?}, the layers hold {layered:?}: every module in exactly one layer"
        ));
    }
    let layer_of = |module: &str| layers.iter().position(|l| l.contains(&module));
    for (file, source) in sources {
        let Some(module) = module_of(file).first().cloned() else {
            continue;
        };
        let Some(rank) = layer_of(&module) else {
            continue;
        };
        for path in paths(&code(source), "crate") {
            let Some(name) = path.first() else { continue };
            match layer_of(name) {
                Some(r) if r < rank => {}
                Some(_) if *name == module => wrong.push(format!(
                    "{file}: `crate::{name}` from inside `{name}` (use `super::`)"
                )),
                Some(_) => wrong.push(format!(
                    "{file}: `{module}` imports `{name}`, which is not in a lower layer"
                )),
                None => wrong.push(format!(
                    "{file}: `crate::{name}` is a root re-export; import it from its module"
                )),
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    wrong
}

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

#[test]
fn each_crate_imports_downward_only() {
    for (dir, layers) in [
        ("tool-runtime", CORE),
        ("tool-runtime-mcp", MCP),
        ("tool-macros", MACROS),
    ] {
        let wrong = against_layers(&read(&workspace().join(dir).join("src")), layers);
        assert!(
            wrong.is_empty(),
            "{dir}: imports that go up:\n{}",
            wrong.join("\n")
        );
    }
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let mut crates = Vec::new();
    for entry in std::fs::read_dir(workspace()).unwrap().flatten() {
        let src = entry.path().join("src");
        if entry.path().join("Cargo.toml").exists() && src.is_dir() {
            crates.push(src);
        }
    }
    assert!(crates.len() >= 8, "the workspace's crates: {crates:?}");
    let mut found = Vec::new();
    for src in crates {
        for circle in circles(&read(&src)) {
            found.push(format!("{}: {}", src.display(), circle.join(" <-> ")));
        }
    }
    assert!(
        found.is_empty(),
        "files that import each other:\n{}",
        found.join("\n")
    );
}

/// The checks on planted sources: each would fail the real crates the same way.
#[test]
fn a_planted_import_is_caught() {
    let crate_of = |files: &[(&str, &str)]| -> Sources {
        files
            .iter()
            .map(|(f, t)| (f.to_string(), t.to_string()))
            .collect()
    };
    let layers: &[&[&str]] = &[&["low"], &["high"]];
    let good = crate_of(&[
        ("lib.rs", "mod low;\nmod high;\npub use high::H;"),
        ("low.rs", "pub(crate) struct L;"),
        (
            "high.rs",
            "use crate::low::L;\n// crate::high is a comment\npub struct H;",
        ),
    ]);
    assert_eq!(against_layers(&good, layers), Vec::<String>::new());
    assert!(circles(&good).is_empty());

    // A lower module naming a higher one, in any form.
    for planted in [
        "use crate::high::H;",
        "use crate::{high::H};",
        "fn f() { crate::high::g() }",
        "use crate::H;",
    ] {
        let mut bad = good.clone();
        bad.insert("low.rs".into(), format!("{planted}\npub(crate) struct L;"));
        let wrong = against_layers(&bad, layers);
        assert_eq!(wrong.len(), 1, "{planted}: {wrong:?}");
        assert!(wrong[0].starts_with("low.rs: "), "{wrong:?}");
        if planted != "use crate::H;" {
            assert_eq!(circles(&bad), [["high.rs", "low.rs"]], "{planted}");
        }
    }

    // Files of one directory module importing each other through `super::`; the entrance
    // using its files, and they using it, is no circle.
    let room = crate_of(&[
        ("lib.rs", "mod http;"),
        (
            "http/mod.rs",
            "mod body;\nmod shares;\nuse body::read;\npub(crate) struct Config;",
        ),
        (
            "http/body.rs",
            "use super::Config;\nuse super::shares::refuse;",
        ),
        ("http/shares.rs", "use super::{body::{self, read}, Config};"),
    ]);
    assert_eq!(circles(&room), [["http/body.rs", "http/shares.rs"]]);
    let mut fixed = room.clone();
    fixed.insert("http/body.rs".into(), "use super::Config;".into());
    assert!(circles(&fixed).is_empty());
    // A test module at the end of a file imports what it tests.
    fixed.insert(
        "http/body.rs".into(),
        "use super::Config;\n#[cfg(test)]\nmod tests {\n    use super::super::shares::refuse;\n}"
            .into(),
    );
    assert!(circles(&fixed).is_empty());
}
