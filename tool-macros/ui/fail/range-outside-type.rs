use tool_runtime::tool;

#[tool(description = "Atur volume pengeras suara.")]
fn atur_volume(#[arg(description = "Volume", range = 0..=1000)] volume: u8) -> u8 {
    volume
}

fn main() {}
