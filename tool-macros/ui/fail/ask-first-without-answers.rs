use tool_runtime::{Question, tool};

fn nama() -> Vec<Question> {
    vec![Question::text("nama", "Siapa nama Anda?")]
}

#[tool(description = "Sapa orang dengan namanya.", ask_first = nama)]
fn sapa() -> String {
    "Halo".into()
}

fn main() {}
