//! A result larger than its tool's bound (`max_result_chars`), over MCP: the official Python
//! client gets the bound's worth of text, the notice and a `resource_link`, and reads the whole
//! 2 MB result through the link; the listing declares no `outputSchema` for such a tool.

use crate::common;

use serde::Serialize;
use tool_runtime::{ToolSet, tool};
use tool_runtime_mcp::McpServer;
use tool_runtime_mcp::http::HttpServer;

/// One line of the attendance log.
#[derive(Serialize, schemars::JsonSchema)]
struct Kehadiran {
    nik: String,
    tanggal: String,
    masuk: String,
    pulang: String,
}

/// A year of attendance for 1,000 employees' first weeks: about 2 MB of JSON.
#[tool(
    name = "ekspor-kehadiran",
    description = "Ekspor seluruh catatan kehadiran karyawan setahun sebagai daftar JSON; pakai saat HR minta data mentah kehadiran.",
    max_result_chars = 20_000,
    read_only
)]
fn ekspor_kehadiran(
    #[arg(description = "Tahun catatan", range = 2000..=2100)] tahun: u16,
) -> Vec<Kehadiran> {
    (0..28_000)
        .map(|i| Kehadiran {
            nik: format!("K-{:04}", i % 1_000),
            tanggal: format!("{tahun}-{:02}-{:02}", 1 + (i / 1_000) % 12, 1 + i % 28),
            masuk: "08:0".to_owned() + &(i % 10).to_string(),
            pulang: "17:0".to_owned() + &(i % 10).to_string(),
        })
        .collect()
}

#[tokio::test]
async fn the_python_client_reads_the_whole_of_a_cut_result_through_its_link() {
    let tools = ToolSet::new([ekspor_kehadiran::tool()]).unwrap();
    let whole = serde_json::to_string(&ekspor_kehadiran(2026)).unwrap();
    assert!(whole.len() > 2_000_000, "{}", whole.len());
    let bound = HttpServer::new(McpServer::new(tools))
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let url = format!("http://{}/mcp", bound.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(bound.serve_until(async {
        let _ = stopped.await;
    }));
    common::run_python_script_async(
        "python_kept_result_client.py",
        &[&url, "20000", &whole.len().to_string()],
    )
    .await;
    let _ = stop.send(());
    served.await.unwrap().unwrap();
}
