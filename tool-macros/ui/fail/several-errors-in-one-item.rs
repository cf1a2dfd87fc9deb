use tool_runtime::tool;

#[tool(description = "", not_for = " ")]
fn pesan(
    jumlah: u32,
    #[arg(description = "Menu", range = 1..=3)] menu: String,
    #[arg(description = "Porsi", range = 10..=1)] porsi: u8,
) -> u32 {
    let _ = menu;
    jumlah + porsi as u32
}

// The function still compiles: calling it adds no error of its own.
fn main() {
    let _ = pesan(1, String::new(), 2);
}
