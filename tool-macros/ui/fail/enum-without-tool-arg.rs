use tool_runtime::tool;

// An enum that derives schemars' `JsonSchema` only: the message says what to derive, once.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Prioritas {
    Rendah,
    Tinggi,
}

#[tool(description = "Buat tiket dukungan dengan prioritas tertentu.")]
fn buat_tiket(#[arg(description = "Prioritas tiket")] prioritas: Prioritas) -> bool {
    matches!(prioritas, Prioritas::Tinggi)
}

fn main() {}
