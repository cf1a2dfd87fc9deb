//! The registry is scoped: a set made from it holds the tools of the modules it names, never a
//! dependency's, however they are linked.

use tool_runtime::ToolSet;

#[test]
fn a_set_from_a_module_never_holds_a_dependencys_tools() {
    // The examples crate is linked into this binary and registers its tools too.
    let linked = examples::cuaca::cuaca_terkini::tool().name();
    let ours = ToolSet::from_module(module_path!().split("::").next().unwrap()).unwrap();
    assert!(
        ours.get(linked).is_none(),
        "{linked} is the examples crate's"
    );
    assert!(
        ours.get("tambah").is_some(),
        "this crate's own tools are in it"
    );
    // Named explicitly, the dependency's tools are served.
    let theirs = ToolSet::from_module("examples::cuaca").unwrap();
    assert_eq!(theirs.names().collect::<Vec<_>>(), [linked]);
    // A module's name is matched whole: `examples::cua` names no module.
    assert!(ToolSet::from_module("examples::cua").unwrap().is_empty());
}
