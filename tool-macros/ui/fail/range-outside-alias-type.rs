use tool_runtime::tool;

type Volume = u8;

#[tool(description = "Atur volume pengeras suara.")]
fn atur_volume(#[arg(description = "Volume", range = 0..=1000)] volume: Volume) -> u8 {
    volume
}

fn main() {}
