use tool_runtime::{Answers, Question, tool};

fn alasan() -> Vec<Question> {
    vec![Question::text("alasan", "Apa alasan cutinya?")]
}

#[tool(
    description = "Ajukan cuti dengan alasan dari karyawan.",
    needs_approval,
    ask_first = alasan
)]
fn ajukan(#[ctx] answers: &Answers) -> String {
    format!("{:?}", answers.get("alasan"))
}

fn main() {}
