use tool_runtime::{Context, ToolSet, tool};

#[tool(description = "Kembalikan salam untuk satu nama secara langsung.")]
fn salam(#[arg(description = "Nama orang")] nama: String) -> String {
    format!("Halo, {nama}")
}

#[tool(description = "Kembalikan salam untuk satu nama setelah menunggu layanan lain.")]
async fn salam_nanti(#[arg(description = "Nama orang")] nama: String) -> String {
    format!("Halo lagi, {nama}")
}

fn main() {
    let set = ToolSet::new([salam::tool(), salam_nanti::tool()]).unwrap();
    let cx = Context::new();
    assert_eq!(set.call(&cx, "salam", r#"{"nama":"Sari"}"#).blocking().unwrap().value(), "Halo, Sari");
    assert_eq!(set.call(&cx, "salam_nanti", r#"{"nama":"Budi"}"#).blocking().unwrap().value(), "Halo lagi, Budi");
}
