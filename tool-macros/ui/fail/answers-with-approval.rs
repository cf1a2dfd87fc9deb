use tool_runtime::{Answers, Question, Unanswered, tool};

#[tool(description = "Hapus berkas setelah bertanya berkas yang mana.", destructive)]
fn hapus_berkas(#[ctx] answers: &Answers) -> Result<String, Unanswered> {
    let [berkas] = answers.ask([Question::text("berkas", "Berkas mana yang dihapus?")])?;
    Ok(format!("{berkas:?}"))
}

fn main() {}
