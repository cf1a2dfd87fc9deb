//! The HR assistant, built for real: who is asking comes from the session, never from
//! the model; what each person may see comes from their grants; booking leave waits for a
//! person's approval. One file per tool, each a thin shell over `domain`.

pub mod domain;

/// One file per tool: each tool's description, arguments and output read together.
mod tools {
    pub mod ajukan_cuti;
    pub mod cek_cuti_tim;
    pub mod cek_riwayat_cuti;
    pub mod cek_sisa_cuti;
    pub mod cek_status_reimburse;
}

pub use tools::ajukan_cuti::{HasilAjuan, StatusAjuan, ajukan_cuti};
pub use tools::cek_cuti_tim::{HasilTim, cek_cuti_tim};
pub use tools::cek_riwayat_cuti::{HasilRiwayat, cek_riwayat_cuti};
pub use tools::cek_sisa_cuti::{HasilCuti, cek_sisa_cuti};
pub use tools::cek_status_reimburse::{HasilReimburse, cek_status_reimburse};

use serde::Serialize;
use tool_runtime::{Context, Grants, ToolArg, ToolSet, Wording};

use domain::Db;

/// Who is logged in. The host builds it from its login; the model never sees or sets it.
#[derive(Debug, Clone)]
pub struct Session {
    pub nik: String,
    pub peran: Peran,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peran {
    Karyawan,
    Manajer,
}

impl Session {
    pub fn new(nik: &str, peran: Peran) -> Self {
        Session {
            nik: nik.into(),
            peran,
        }
    }

    /// The permissions of this role: every employee reads their own leave and reimbursements and
    /// may request leave; a manager may also read the team's leave balances, but not the team's
    /// reimbursements (no grant gives that).
    pub fn grants(&self) -> Grants {
        let mut g = vec!["hr.cuti.baca", "hr.reimburse.baca", "hr.cuti.ajukan"];
        if self.peran == Peran::Manajer {
            g.push("hr.tim.cuti.baca");
        }
        Grants::new(g)
    }

    /// The context of one conversation: the database, the session and its grants.
    pub fn context(&self, db: std::sync::Arc<Db>) -> Context {
        Context::new()
            .with(SharedDb(db))
            .with(self.clone())
            .with(self.grants())
    }
}

/// The database as the tools receive it from the context.
pub struct SharedDb(pub std::sync::Arc<Db>);

impl std::ops::Deref for SharedDb {
    type Target = Db;
    fn deref(&self) -> &Db {
        &self.0
    }
}

/// Whether the employee was found. Failure is data: the shape of a result never changes.
#[derive(ToolArg, Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Data ditemukan
    Ok,
    /// NIK pada sesi tidak terdaftar di sistem HR
    KaryawanTidakDitemukan,
}

/// A failure of the HR system itself (not of the request): the model gets a sentence it can
/// relay, the log gets the detail.
#[derive(Debug)]
pub struct Gangguan;

impl std::fmt::Display for Gangguan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("sistem HR sedang bermasalah; minta pengguna mencoba lagi nanti")
    }
}

impl From<rusqlite::Error> for Gangguan {
    fn from(e: rusqlite::Error) -> Self {
        eprintln!("hr: database error: {e}");
        Gangguan
    }
}

/// Every HR tool, with the toolkit's messages to the model in Indonesian, the language of the
/// company's employees. An agent gets `tool_set().visible_to(&session.context(db))`.
pub fn tool_set() -> ToolSet {
    ToolSet::new([
        cek_sisa_cuti::tool(),
        cek_riwayat_cuti::tool(),
        cek_status_reimburse::tool(),
        cek_cuti_tim::tool(),
        ajukan_cuti::tool(),
    ])
    .expect("the HR tools have distinct names and valid schemas")
    .with_wording(Wording::indonesian())
}

/// This year, from the system clock (UTC).
pub fn tahun_ini() -> u16 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    // Days to civil year (Howard Hinnant's algorithm).
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2)) as u16
}

/// The HR tools as an MCP server for one configured session: `HR_NIK` (default `K-001`) and
/// `HR_PERAN` (`karyawan` or `manajer`), with the database at `HR_DB` (default: the system's temp
/// dir) and `HR_MCP_PAGE_SIZE` tools per `tools/list` page. The employee comes from this
/// configuration, never from the model.
pub fn mcp_server() -> Result<tool_runtime::mcp::McpServer, Box<dyn std::error::Error + Send + Sync>>
{
    let nik = std::env::var("HR_NIK").unwrap_or_else(|_| "K-001".into());
    let peran = match std::env::var("HR_PERAN").as_deref() {
        Ok("manajer") => Peran::Manajer,
        _ => Peran::Karyawan,
    };
    let path = std::env::var_os("HR_DB")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("hr_assistant.sqlite"));
    let db = std::sync::Arc::new(Db::open(&path)?);
    let session = Session::new(&nik, peran);
    let page_size = std::env::var("HR_MCP_PAGE_SIZE")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50);
    Ok(tool_runtime::mcp::McpServer::new(tool_set())
        .with_server_info("hr-assistant", env!("CARGO_PKG_VERSION"))
        .with_page_size(page_size)
        .with_context(move || session.context(db.clone())))
}

/// Serves [`mcp_server`] on stdio, or on Streamable HTTP when `--http ADDR` is among `args`.
pub async fn serve_mcp(args: &[String]) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let server = mcp_server()?;
    match args.iter().position(|a| a == "--http") {
        Some(i) => {
            let addr = args
                .get(i + 1)
                .ok_or("--http needs an address such as 127.0.0.1:8000")?
                .parse()?;
            eprintln!("hr-assistant MCP server on http://{addr}/mcp");
            Ok(server.serve_http(addr).await?)
        }
        None => server.serve_stdio().await,
    }
}
