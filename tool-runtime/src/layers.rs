//! The core's modules import downward only: each module may use only the modules of the layers
//! below its own, so no two modules import each other and each layer can be read and changed
//! with only the layers below it in mind. Importing a root re-export (`crate::ToolSet`) is
//! refused too: it would hide which module a name comes from.

/// The layers, lowest first; a module may import the modules of earlier layers (and of its own
/// module, through `super`/`self`, which this check does not see). Every module `lib.rs`
/// declares is in exactly one layer.
pub(crate) const LAYERS: &[&[&str]] = &[
    // The boxed future; which Rust types may be arguments; canonical schemas.
    &["future"],
    &["arg"],
    &["schema"],
    // Validation: schemas compiled into rules, values checked against them.
    &["validate"],
    // The host's data (grants, annotations, content, a call's progress handle), and the
    // approval model.
    &["host", "approval", "progress"],
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

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The modules in `lib.rs`'s order (the hidden `__private` re-exports and this test excluded).
fn declared(lib: &str) -> Vec<String> {
    lib.lines()
        .map(str::trim)
        .filter_map(|l| {
            l.strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("mod "))
        })
        .filter_map(|l| l.strip_suffix(';'))
        .filter(|m| *m != "__private" && *m != "layers")
        .map(str::to_owned)
        .collect()
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// What a source file names after `crate::`: module names, and names re-exported at the root.
fn imports(source: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in source.lines() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for item in group[..end].split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        names.insert(name);
                    }
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                names.insert(name);
            }
        }
    }
    names
}

#[test]
fn modules_import_downward_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let mut declared = declared(&lib);
    let mut layered: Vec<String> = LAYERS
        .iter()
        .flat_map(|l| l.iter())
        .map(|m| m.to_string())
        .collect();
    declared.sort();
    layered.sort();
    assert_eq!(
        declared, layered,
        "every module of lib.rs in exactly one layer"
    );
    let layer_of = |module: &str| LAYERS.iter().position(|l| l.contains(&module));
    let mut wrong = Vec::new();
    for module in LAYERS.iter().flat_map(|l| l.iter()) {
        let rank = layer_of(module).unwrap();
        let mut sources = Vec::new();
        let file = src.join(format!("{module}.rs"));
        if file.exists() {
            sources.push(file);
        }
        files(&src.join(module), &mut sources);
        assert!(!sources.is_empty(), "no source for module `{module}`");
        for path in sources {
            let text = std::fs::read_to_string(&path).unwrap();
            for name in imports(&text) {
                let shown = path.strip_prefix(&src).unwrap().display();
                match layer_of(&name) {
                    Some(r) if r < rank => {}
                    Some(_) if name == *module => {
                        wrong.push(format!("{shown}: `crate::{name}` from inside `{name}`"))
                    }
                    Some(_) => wrong.push(format!(
                        "{shown}: `{module}` imports `{name}`, which is not in a lower layer"
                    )),
                    None => wrong.push(format!(
                        "{shown}: `crate::{name}` is a root re-export; import it from its module"
                    )),
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports that go up:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_check_sees_every_form_of_import() {
    let names = imports(
        "use crate::a::B;\nuse crate::{c, d::E};\n// crate::ignored\nlet x = crate::f::g();\nuse crate::Root;",
    );
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(names, ["Root", "a", "c", "d", "f"]);
    assert_eq!(
        declared("mod a;\npub mod b;\n#[path = \"x\"]\npub mod __private;\nmod layers;"),
        ["a", "b"]
    );
}
