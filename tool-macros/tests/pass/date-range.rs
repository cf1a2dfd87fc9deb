use chrono::NaiveDate;
use tool_runtime::{Context, ToolSet, tool};

#[tool(description = "Book a day off in 2026 and return the day booked.")]
fn book(
    #[arg(description = "The day", range = "2026-01-01"..="2026-12-31")] day: NaiveDate,
    #[arg(description = "A second day, if any; null for none", range = "2026-01-01"..)] also: Option<NaiveDate>,
) -> NaiveDate {
    let _ = also;
    day
}

fn main() {
    let tools = ToolSet::new([book::tool()]).unwrap();
    let schema = book::tool().input_schema();
    assert_eq!(schema["properties"]["day"]["formatMinimum"], "2026-01-01");
    assert_eq!(schema["properties"]["day"]["formatMaximum"], "2026-12-31");
    let cx = Context::new();
    assert!(tools.call(&cx, "book", r#"{"day": "2026-05-01"}"#).blocking().is_ok());
    let err = tools.call(&cx, "book", r#"{"day": "9999-12-31"}"#).blocking().unwrap_err();
    assert!(err.model_message().contains("a date from 2026-01-01 to 2026-12-31"), "{err}");
    let err = tools
        .call(&cx, "book", r#"{"day": "2026-05-01", "also": "2025-12-31"}"#)
        .blocking()
        .unwrap_err();
    assert!(err.model_message().contains("on or after 2026-01-01"), "{err}");
}
