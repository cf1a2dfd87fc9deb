use tool_runtime::tool;

type Day = String;

#[tool(description = "Book a day off and return the day booked.")]
fn book(#[arg(description = "The day", range = "2026-01-01"..="2026-12-31")] day: Day) -> Day {
    day
}

fn main() {}
