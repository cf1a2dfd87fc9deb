use chrono::NaiveDate;
use tool_runtime::tool;

#[tool(description = "Book a day off and return the day booked.")]
fn book(#[arg(description = "The day", range = "2026-01-01"..="2026-02-30")] day: NaiveDate) -> NaiveDate {
    day
}

fn main() {}
