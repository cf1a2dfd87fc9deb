use tool_runtime::tool;

#[tool(description = "Book some days off and return how many were booked.")]
fn book(#[arg(description = "How many days", range = "2026-01-01"..="2026-12-31")] days: u32) -> u32 {
    days
}

fn main() {}
