use tool_runtime::tool;

#[tool(description = "Ambil status reimbursement.", requires = "hr reimburse")]
fn status_reimburse() -> String {
    String::new()
}

fn main() {}
