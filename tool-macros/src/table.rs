//! The argument table of a tool, as rustdoc and the tool catalogs show it. This one file is
//! compiled into both crates (`tool-runtime/src/table.rs` is a link to it): the macro fills the
//! rows from the attributes for the handle's rustdoc, the catalogs from the schema; the columns,
//! the wording of constraints and the escaping are defined here only.

/// One argument, as text.
pub(crate) struct Row<'a> {
    pub name: &'a str,
    pub ty: &'a str,
    pub required: bool,
    pub constraints: &'a str,
    pub default: &'a str,
    pub description: &'a str,
}

/// What bounds an argument, in the forms both sources have.
#[derive(Default)]
pub(crate) struct Bounds<'a> {
    pub min: Option<String>,
    pub max: Option<String>,
    /// `max` is excluded (`a..b`).
    pub exclusive_max: bool,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub pattern: Option<&'a str>,
    /// A JSON Schema `format` (`date`).
    pub format: Option<&'a str>,
    /// `#[arg(unbounded = "why")]`.
    pub unbounded: Option<&'a str>,
    /// The constraints of each item of a list.
    pub items: Option<String>,
}

/// `1..=500`, `>= 1`, `length 1..=64`, `pattern `^K-`...
pub(crate) fn constraints(b: &Bounds) -> String {
    let mut parts = Vec::new();
    let up_to = if b.exclusive_max { ".." } else { "..=" };
    match (&b.min, &b.max) {
        (Some(lo), Some(hi)) => parts.push(format!("{lo}{up_to}{hi}")),
        (Some(lo), None) => parts.push(format!(">= {lo}")),
        (None, Some(hi)) if b.exclusive_max => parts.push(format!("< {hi}")),
        (None, Some(hi)) => parts.push(format!("<= {hi}")),
        (None, None) => {}
    }
    match (b.min_length, b.max_length) {
        (Some(lo), Some(hi)) => parts.push(format!("length {lo}..={hi}")),
        (Some(lo), None) => parts.push(format!("length >= {lo}")),
        (None, Some(hi)) => parts.push(format!("length <= {hi}")),
        (None, None) => {}
    }
    if let Some(p) = b.pattern {
        parts.push(format!("pattern `{p}`"));
    }
    if let Some(f) = b.format {
        parts.push(format!("format `{f}`"));
    }
    if let Some(u) = b.unbounded {
        parts.push(format!("unbounded: {u}"));
    }
    if let Some(items) = b.items.as_deref().filter(|i| !i.is_empty()) {
        parts.push(format!("each item {items}"));
    }
    parts.join(", ")
}

/// The table in Markdown, or "No arguments." for a tool without any.
pub(crate) fn markdown(rows: &[Row]) -> String {
    if rows.is_empty() {
        return "No arguments.".to_owned();
    }
    let mut s = String::from(
        "| argument | type | required | constraints | default | description |\n|---|---|---|---|---|---|",
    );
    for r in rows {
        s.push_str(&format!(
            "\n| `{}` | {} | {} | {} | {} | {} |",
            cell(r.name),
            cell(r.ty),
            if r.required { "yes" } else { "no" },
            cell(r.constraints),
            cell(r.default),
            cell(r.description),
        ));
    }
    s
}

/// Text that stays inside one table cell.
pub(crate) fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}
