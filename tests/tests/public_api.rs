//! The public API of each published crate, as a reviewed artefact: every item a user can name
//! (through the crate's public modules and re-exports), every public field, variant and
//! method, and every trait the crate implements for its public types, one line each, in
//! `tests/public-api/<crate>.txt`. A change to the surface changes the file, so it is reviewed
//! in a diff; this test fails when the file is stale. Regenerate with
//! `UPDATE_PUBLIC_API=1 cargo test -p tests --test public_api`.
//!
//! Read from the sources with `syn`, so it needs no unstable compiler output: an item is public
//! when it is `pub` and every module on its path is `pub`, or when a public module re-exports
//! it (`pub use`); `#[doc(hidden)]` items (the macros' private paths) are left out. Lines keep
//! the item's `#[cfg(feature = ...)]` and `#[non_exhaustive]`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use quote::ToTokens;
use syn::{Attribute, ImplItem, Item, TraitItem, UseTree, Visibility};

const CRATES: &[(&str, &str)] = &[
    ("tool-runtime", "tool_runtime"),
    ("tool-runtime-mcp", "tool_runtime_mcp"),
    ("tool-runtime-sqlite", "tool_runtime_sqlite"),
    ("tool-runtime-postgres", "tool_runtime_postgres"),
    ("tool-runtime-rig", "tool_runtime_rig"),
    ("tool-runtime-otel", "tool_runtime_otel"),
    ("tool-macros", "tool_runtime_macros"),
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// One module's file, parsed, with the path it is known by and whether it is public.
struct Module {
    path: String,
    public: bool,
    items: Vec<Item>,
}

/// Whether an item is left out: `#[doc(hidden)]`, or compiled for tests only (`#[cfg(test)]`,
/// `#[cfg(all(test, ...))]`). Words are read as identifiers, so a doc comment that says
/// "hidden" and `#[cfg(feature = "testing")]` are not.
fn hidden(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("doc") && names(a, "hidden")
            || a.path().is_ident("cfg") && names(a, "test")
    })
}

/// Whether an attribute's arguments name `word` as an identifier, outside a `not(...)`.
fn names(attr: &Attribute, word: &str) -> bool {
    fn walk(tokens: proc_macro2::TokenStream, word: &str) -> bool {
        let mut negated = false;
        for token in tokens {
            match token {
                proc_macro2::TokenTree::Ident(ident) => {
                    if ident == word {
                        return true;
                    }
                    negated = ident == "not";
                }
                proc_macro2::TokenTree::Group(group) => {
                    if !std::mem::take(&mut negated) && walk(group.stream(), word) {
                        return true;
                    }
                }
                _ => negated = false,
            }
        }
        false
    }
    match &attr.meta {
        syn::Meta::List(list) => walk(list.tokens.clone(), word),
        _ => false,
    }
}

/// The `#[cfg(...)]` and `#[non_exhaustive]` of an item, as a prefix.
fn marks(attrs: &[Attribute]) -> String {
    let mut out = String::new();
    for a in attrs {
        if a.path().is_ident("cfg") || a.path().is_ident("non_exhaustive") {
            out.push_str(&tokens(a));
            out.push(' ');
        }
    }
    out
}

fn tokens(t: &impl ToTokens) -> String {
    let text = t.to_token_stream().to_string();
    // Tighten the token spacing a little for reading.
    text.replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" < ", "<")
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
        .replace(" (", "(")
        .replace("( ", "(")
        .replace(" )", ")")
        .replace("& ", "&")
        .replace(" ;", ";")
        .replace("# [", "#[")
        .replace(" ]", "]")
        .replace("[ ", "[")
        // A trailing comma is formatting, not API.
        .replace(",)", ")")
        .replace(",>", ">")
        .replace(", }", " }")
}

fn is_pub(v: &Visibility) -> bool {
    matches!(v, Visibility::Public(_))
}

/// Every module of the crate rooted at `lib`, as `crate::a::b`.
fn modules(lib: &Path) -> Vec<Module> {
    let mut out = Vec::new();
    let file = syn::parse_file(&std::fs::read_to_string(lib).unwrap()).unwrap();
    walk(lib, "crate", true, file.items, &mut out);
    out
}

fn walk(file: &Path, path: &str, public: bool, items: Vec<Item>, out: &mut Vec<Module>) {
    let dir = if file
        .file_name()
        .is_some_and(|n| n == "lib.rs" || n == "mod.rs")
    {
        file.parent().unwrap().to_owned()
    } else {
        file.with_extension("")
    };
    for item in &items {
        let Item::Mod(m) = item else { continue };
        if hidden(&m.attrs) {
            continue;
        }
        let name = m.ident.to_string();
        let child = format!("{path}::{name}");
        let child_public = public && is_pub(&m.vis);
        if let Some((_, inline)) = &m.content {
            walk(file, &child, child_public, inline.clone(), out);
            continue;
        }
        let explicit = m.attrs.iter().find_map(|a| {
            if !a.path().is_ident("path") {
                return None;
            }
            let syn::Meta::NameValue(nv) = &a.meta else {
                return None;
            };
            let syn::Expr::Lit(l) = &nv.value else {
                return None;
            };
            let syn::Lit::Str(s) = &l.lit else {
                return None;
            };
            Some(file.parent().unwrap().join(s.value()))
        });
        let candidates = [
            dir.join(format!("{name}.rs")),
            dir.join(&name).join("mod.rs"),
        ];
        let Some(found) = explicit.or_else(|| candidates.into_iter().find(|c| c.exists())) else {
            continue;
        };
        let parsed = syn::parse_file(&std::fs::read_to_string(&found).unwrap()).unwrap();
        walk(&found, &child, child_public, parsed.items, out);
    }
    out.push(Module {
        path: path.to_owned(),
        public,
        items,
    });
}

/// The names a `pub use` brings into a module: (the name there, the path it names).
fn uses(tree: &UseTree, prefix: &str, out: &mut Vec<(String, String)>) {
    match tree {
        UseTree::Path(p) => uses(&p.tree, &format!("{prefix}{}::", p.ident), out),
        UseTree::Name(n) => out.push((n.ident.to_string(), format!("{prefix}{}", n.ident))),
        UseTree::Rename(r) => out.push((r.rename.to_string(), format!("{prefix}{}", r.ident))),
        UseTree::Group(g) => g.items.iter().for_each(|t| uses(t, prefix, out)),
        UseTree::Glob(_) => out.push(("*".into(), format!("{prefix}*"))),
    }
}

/// The path `used` names, seen from module `from`: `crate::`, `self::`, `super::`, or a child
/// module's name are this crate's (`crate::...`); anything else is another crate's path.
fn resolve(from: &str, used: &str, modules: &BTreeSet<String>) -> String {
    let mut base: Vec<&str> = from.split("::").collect();
    let mut rest = used;
    let mut local = false;
    loop {
        if let Some(r) = rest.strip_prefix("super::") {
            base.pop();
            rest = r;
            local = true;
        } else if let Some(r) = rest.strip_prefix("self::") {
            rest = r;
            local = true;
        } else if let Some(r) = rest.strip_prefix("crate::") {
            base = vec!["crate"];
            rest = r;
            local = true;
        } else {
            break;
        }
    }
    let first = rest.split("::").next().unwrap_or_default();
    if !local && !modules.contains(&format!("{from}::{first}")) {
        return rest.to_owned();
    }
    format!("{}::{rest}", base.join("::"))
}

/// The public API of one crate, one line per item.
fn api(dir: &str, name: &str) -> String {
    let lib = workspace().join(dir).join("src/lib.rs");
    let modules = modules(&lib);
    let module_paths: BTreeSet<String> = modules.iter().map(|m| m.path.clone()).collect();
    // Every `pub use` of every module: the name it makes, and what it names.
    let mut aliases: BTreeMap<String, String> = BTreeMap::new();
    let mut external = BTreeSet::new();
    for m in &modules {
        for item in &m.items {
            let Item::Use(u) = item else { continue };
            if !is_pub(&u.vis) || hidden(&u.attrs) {
                continue;
            }
            let mut found = Vec::new();
            uses(&u.tree, "", &mut found);
            for (there, used) in found {
                let target = resolve(&m.path, &used, &module_paths);
                let here = format!("{}::{there}", m.path);
                if target.starts_with("crate::") {
                    aliases.insert(here, target);
                } else if m.public {
                    // Another crate's item, re-exported as part of this one's API.
                    external.insert(format!("{}pub use {target} as {here}", marks(&u.attrs)));
                }
            }
        }
    }
    let defining = |mut path: String| {
        for _ in 0..8 {
            match aliases.get(&path) {
                Some(next) => path = next.clone(),
                None => break,
            }
        }
        path
    };
    // Where each item defined in the crate is publicly known: its own path if its module is
    // public, and every path a public module re-exports it under.
    let mut known: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for m in &modules {
        for item in &m.items {
            if let Some((ident, vis, attrs)) = named(item) {
                let at = format!("{}::{ident}", m.path);
                if m.public && is_pub(vis) && !hidden(attrs) {
                    known.entry(at.clone()).or_default().insert(at);
                }
            }
        }
    }
    let public: BTreeSet<&str> = modules
        .iter()
        .filter(|m| m.public)
        .map(|m| m.path.as_str())
        .collect();
    for here in aliases.keys() {
        let module = here.rsplit_once("::").map(|(m, _)| m).unwrap_or_default();
        if public.contains(module) {
            known
                .entry(defining(here.clone()))
                .or_default()
                .insert(here.clone());
        }
    }
    let mut lines = external;
    for m in &modules {
        let imports = imports_of(m, &module_paths);
        for item in &m.items {
            describe(item, m, &imports, &known, &mut lines);
        }
    }
    let text: Vec<String> = lines
        .into_iter()
        .map(|l| l.replace("crate::", &format!("{name}::")))
        .collect();
    text.join("\n") + "\n"
}

/// The names a module imports (`use`, public or not), by the name they have there.
fn imports_of(m: &Module, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for item in &m.items {
        let Item::Use(u) = item else { continue };
        let mut found = Vec::new();
        uses(&u.tree, "", &mut found);
        for (there, used) in found {
            out.insert(there, resolve(&m.path, &used, modules));
        }
    }
    out
}

fn named(item: &Item) -> Option<(String, &Visibility, &[Attribute])> {
    Some(match item {
        Item::Fn(i) => (i.sig.ident.to_string(), &i.vis, &i.attrs),
        Item::Struct(i) => (i.ident.to_string(), &i.vis, &i.attrs),
        Item::Enum(i) => (i.ident.to_string(), &i.vis, &i.attrs),
        Item::Trait(i) => (i.ident.to_string(), &i.vis, &i.attrs),
        Item::Type(i) => (i.ident.to_string(), &i.vis, &i.attrs),
        Item::Const(i) => (i.ident.to_string(), &i.vis, &i.attrs),
        Item::Static(i) => (i.ident.to_string(), &i.vis, &i.attrs),
        _ => return None,
    })
}

/// The public paths of the type an impl is for, if it is one of the crate's public types.
fn paths_of(
    m: &Module,
    ty: &syn::Type,
    imports: &BTreeMap<String, String>,
    known: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    let syn::Type::Path(p) = ty else {
        return Vec::new();
    };
    let Some(last) = p.path.segments.last() else {
        return Vec::new();
    };
    let ident = last.ident.to_string();
    let at = imports
        .get(&ident)
        .cloned()
        .unwrap_or_else(|| format!("{}::{ident}", m.path));
    known
        .get(&at)
        .map(|paths| paths.iter().cloned().collect())
        .unwrap_or_default()
}

fn describe(
    item: &Item,
    m: &Module,
    imports: &BTreeMap<String, String>,
    known: &BTreeMap<String, BTreeSet<String>>,
    out: &mut BTreeSet<String>,
) {
    if let Some((ident, _, attrs)) = named(item) {
        let at = format!("{}::{ident}", m.path);
        let Some(paths) = known.get(&at) else { return };
        let mark = marks(attrs);
        for path in paths {
            match item {
                Item::Fn(f) => out.insert(format!("{mark}{path}: {}", tokens(&f.sig))),
                Item::Struct(s) => {
                    out.insert(format!("{mark}pub struct {path}{}", tokens(&s.generics)));
                    for f in s.fields.iter().filter(|f| is_pub(&f.vis)) {
                        let field = f.ident.as_ref().map(|i| i.to_string()).unwrap_or_default();
                        out.insert(format!("{path}.{field}: {}", tokens(&f.ty)));
                    }
                    true
                }
                Item::Enum(e) => {
                    out.insert(format!("{mark}pub enum {path}{}", tokens(&e.generics)));
                    for v in &e.variants {
                        // A variant's fields without their doc comments: the API, not its
                        // prose.
                        let mut fields = v.fields.clone();
                        for f in fields.iter_mut() {
                            f.attrs.retain(|a| !a.path().is_ident("doc"));
                        }
                        let fields = tokens(&fields);
                        out.insert(format!("{}{path}::{}{fields}", marks(&v.attrs), v.ident));
                    }
                    true
                }
                Item::Trait(t) => {
                    let supers = if t.supertraits.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", tokens(&t.supertraits))
                    };
                    out.insert(format!(
                        "{mark}pub trait {path}{}{supers}",
                        tokens(&t.generics)
                    ));
                    for i in &t.items {
                        if let TraitItem::Fn(f) = i {
                            let provided = if f.default.is_some() {
                                " (provided)"
                            } else {
                                ""
                            };
                            out.insert(format!("{path}::{}{provided}", tokens(&f.sig)));
                        }
                    }
                    true
                }
                Item::Type(t) => out.insert(format!("{mark}pub type {path} = {}", tokens(&t.ty))),
                Item::Const(c) => out.insert(format!("{mark}pub const {path}: {}", tokens(&c.ty))),
                Item::Static(s) => {
                    out.insert(format!("{mark}pub static {path}: {}", tokens(&s.ty)))
                }
                _ => false,
            };
        }
        return;
    }
    let Item::Impl(i) = item else { return };
    if hidden(&i.attrs) {
        return;
    }
    let mark = marks(&i.attrs);
    for path in paths_of(m, &i.self_ty, imports, known) {
        match &i.trait_ {
            Some((trait_path, _)) => {
                out.insert(format!(
                    "{mark}impl{} {} for {path}",
                    tokens(&i.generics),
                    tokens(trait_path)
                ));
            }
            None => {
                for item in &i.items {
                    match item {
                        ImplItem::Fn(f) if is_pub(&f.vis) && !hidden(&f.attrs) => {
                            out.insert(format!("{}{path}::{}", marks(&f.attrs), tokens(&f.sig)));
                        }
                        ImplItem::Const(c) if is_pub(&c.vis) && !hidden(&c.attrs) => {
                            out.insert(format!("{path}::{}: {}", c.ident, tokens(&c.ty)));
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}

#[test]
fn the_public_api_lists_are_current() {
    let update = std::env::var_os("UPDATE_PUBLIC_API").is_some();
    let dir = workspace().join("tests/public-api");
    let mut stale = Vec::new();
    for (crate_dir, name) in CRATES {
        let now = api(crate_dir, name);
        let file = dir.join(format!("{crate_dir}.txt"));
        let committed = std::fs::read_to_string(&file).unwrap_or_default();
        if committed != now {
            if update {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&file, &now).unwrap();
            } else {
                stale.push(file.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "the public API changed: {stale:?} are stale. Review the change, then regenerate them with \
         `UPDATE_PUBLIC_API=1 cargo test -p tests --test public_api` and commit them"
    );
}
