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
    pub mod persetujuan;
}

pub use tools::ajukan_cuti::{HasilAjuan, StatusAjuan, ajukan_cuti};
pub use tools::cek_cuti_tim::{HasilTim, cek_cuti_tim};
pub use tools::cek_riwayat_cuti::{HasilRiwayat, cek_riwayat_cuti};
pub use tools::cek_sisa_cuti::{HasilCuti, cek_sisa_cuti};
pub use tools::cek_status_reimburse::{HasilReimburse, cek_status_reimburse};
pub use tools::persetujuan::{
    AjuanMenunggu, DaftarAjuan, HasilPutusan, StatusPutusan, daftar_persetujuan,
    putuskan_persetujuan,
};

use serde::Serialize;
use tool_runtime::{
    ApprovalStore, BoxFuture, Context, Grants, PendingCall, StoreError, ToolArg, ToolSet, Wording,
};

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
    /// may request leave; a manager may also read the team's leave balances and approve the
    /// team's leave (where the server asks managers to: [`mcp_server`]), but not read the
    /// team's reimbursements (no grant gives that).
    pub fn grants(&self) -> Grants {
        let mut g = vec!["hr.cuti.baca", "hr.reimburse.baca", "hr.cuti.ajukan"];
        if self.peran == Peran::Manajer {
            g.extend(["hr.tim.cuti.baca", "hr.cuti.setujui"]);
        }
        Grants::new(g)
    }

    /// The context of one conversation: the database, the session and its role's grants.
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

/// Calls waiting for a person's approval, in the HR database: a conversation paused in one
/// process is resumed in another, and each held call runs at most once.
pub struct Persetujuan(pub std::sync::Arc<Db>);

impl ApprovalStore for Persetujuan {
    fn hold(&self, call: PendingCall) -> BoxFuture<'_, Result<(), StoreError>> {
        let stored = self
            .0
            .simpan_persetujuan(&call.ticket, &call.tool, &call.arguments.to_string())
            .map_err(StoreError::from_source);
        Box::pin(std::future::ready(stored))
    }

    fn take<'a>(
        &'a self,
        ticket: &'a str,
    ) -> BoxFuture<'a, Result<Option<PendingCall>, StoreError>> {
        let taken = self
            .0
            .ambil_persetujuan(ticket)
            .map_err(StoreError::from_source)
            .and_then(|row| {
                row.map(|(tool, arguments)| {
                    let arguments =
                        serde_json::from_str(&arguments).map_err(StoreError::from_source)?;
                    Ok(PendingCall::new(ticket, tool, arguments))
                })
                .transpose()
            });
        Box::pin(std::future::ready(taken))
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

/// How an HR server knows who is calling.
#[derive(Clone, Debug)]
pub enum Login {
    /// One session for every request: stdio (the process is started for one person) or a
    /// local HTTP server for development.
    Fixed(Session),
    /// Each request's access token: its `sub` is the employee's NIK, the role comes from the
    /// HR data (whoever leads a team is a manager), and the token's scopes can only narrow the
    /// role's grants, never widen them.
    Token,
}

/// The context of one request: the database, and the session [`Login`] says the caller has.
/// A token whose subject is not an employee is refused.
pub async fn context_for(
    db: std::sync::Arc<Db>,
    login: &Login,
    caller: tool_runtime_mcp::Caller,
) -> Result<Context, tool_runtime_mcp::Refusal> {
    use tool_runtime_mcp::Refusal;
    if let Login::Fixed(session) = login {
        return Ok(session.context(db));
    }
    let principal = caller
        .principal
        .ok_or_else(|| Refusal::new("this server needs an access token"))?;
    let nik = principal.subject.clone();
    let lookup = {
        let db = db.clone();
        tokio::task::spawn_blocking(move || -> Result<_, rusqlite::Error> {
            Ok((db.karyawan(&nik)?, db.memimpin_tim(&nik)?))
        })
    };
    let (karyawan, memimpin) = match lookup.await {
        Ok(Ok(found)) => found,
        _ => return Err(Refusal::new(Gangguan.to_string())),
    };
    let Some(karyawan) = karyawan else {
        return Err(Refusal::new(format!(
            "the token's subject {:?} is not an employee",
            principal.subject
        )));
    };
    let peran = if memimpin {
        Peran::Manajer
    } else {
        Peran::Karyawan
    };
    let session = Session::new(&karyawan.nik, peran);
    let grants = session
        .grants()
        .narrowed_to(principal.scopes.iter().map(String::as_str));
    Ok(session.context(db).with(grants))
}

/// The HR tools as an MCP server whose callers [`Login`] names, with the database at `HR_DB`
/// (default: the system's temp dir), `HR_MCP_PAGE_SIZE` tools per `tools/list` page,
/// `HR_PERSETUJUAN=manajer` for leave the employee's manager approves (as a task, through
/// `daftar-persetujuan` and `putuskan-persetujuan`; by default the employee confirms it), and
/// `HR_SLOW_BOOKING_MS` to hold each booking's transaction open that long (for the tests that
/// race bookings), `HR_SLOW_HISTORY_MS` to make each reading of leave history that slow (for
/// the attack script's slow calls). What replicas share comes from the environment
/// ([`shared`]).
pub async fn mcp_server(
    login: Login,
) -> Result<tool_runtime_mcp::McpServer, Box<dyn std::error::Error + Send + Sync>> {
    let path = std::env::var_os("HR_DB")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("hr_assistant.sqlite"));
    let millis = |var: &str| {
        std::env::var(var)
            .ok()
            .and_then(|n| n.parse().ok())
            .map_or(std::time::Duration::ZERO, std::time::Duration::from_millis)
    };
    let db = Db::open(&path)?
        .with_booking_delay(millis("HR_SLOW_BOOKING_MS"))
        .with_history_delay(millis("HR_SLOW_HISTORY_MS"));
    let db = std::sync::Arc::new(db);
    let page_size = std::env::var("HR_MCP_PAGE_SIZE")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50);
    let login = std::sync::Arc::new(login);
    let stores = approval_store().await?;
    let manager_approves = match std::env::var("HR_PERSETUJUAN").as_deref() {
        Ok("manajer") => true,
        Ok("sendiri") | Err(_) => false,
        Ok(other) => {
            return Err(
                format!("HR_PERSETUJUAN: expected manajer or sendiri, got {other:?}").into(),
            );
        }
    };
    let mut tools = tool_set();
    if manager_approves {
        tools = tools.with_tools([daftar_persetujuan::tool(), putuskan_persetujuan::tool()])?;
    }
    if let Some((approvals, _)) = &stores {
        tools = tools.with_approvals(approvals.clone());
    }
    let mut server = tool_runtime_mcp::McpServer::new(tools);
    if manager_approves {
        server = server.with_approver("ajukan-cuti", "hr.cuti.setujui")?;
    }
    // A booking runs as a task for a client that follows tasks: kept in the same store as the
    // held approvals, so any replica answers it.
    if let Some((_, tasks)) = stores {
        let mut tasks = tool_runtime::Tasks::shared(tasks);
        if let Some(lease) = std::env::var("HR_TASK_LEASE_MS")
            .ok()
            .and_then(|n| n.parse().ok())
        {
            tasks = tasks.with_lease(std::time::Duration::from_millis(lease));
        }
        server = server.with_tasks(tasks);
    }
    let server = server
        .with_server_info("hr-assistant", env!("CARGO_PKG_VERSION"))
        .with_propagator(tool_runtime_otel::W3c)
        .with_page_size(page_size)
        .with_context(move |caller| {
            let (db, login) = (db.clone(), login.clone());
            async move { context_for(db, &login, caller).await }
        });
    shared(server)
}

/// The session configured by `HR_NIK` (default `K-001`) and `HR_PERAN` (`karyawan` or
/// `manajer`).
pub fn configured_session() -> Session {
    let nik = std::env::var("HR_NIK").unwrap_or_else(|_| "K-001".into());
    let peran = match std::env::var("HR_PERAN").as_deref() {
        Ok("manajer") => Peran::Manajer,
        _ => Peran::Karyawan,
    };
    Session::new(&nik, peran)
}

/// The authorization server HTTP mode trusts, from the environment: `HR_OAUTH_ISSUER`, its
/// keys (`HR_OAUTH_JWKS`: a JWK set file; `HR_OAUTH_PUBLIC_KEY`: an RSA or EC public key PEM
/// file; `HR_OAUTH_HS256_SECRET`: a shared secret), and this server's canonical URI
/// `HR_OAUTH_RESOURCE` (default `http://ADDR/mcp`); with no key given, the keys the issuer
/// publishes (see [`crate::oauth_from_env`]).
async fn resource_server(
    addr: std::net::SocketAddr,
) -> Result<tool_runtime_mcp::oauth::ResourceServer, Box<dyn std::error::Error + Send + Sync>> {
    Ok(crate::oauth_from_env("HR", addr)
        .await?
        .with_required_scopes(["hr"])
        .with_scopes_supported([
            "hr",
            "hr.cuti.baca",
            "hr.reimburse.baca",
            "hr.cuti.ajukan",
            "hr.tim.cuti.baca",
            "hr.cuti.setujui",
        ]))
}

/// One store in its two roles: where calls wait for approval, where tasks are kept.
pub type Stores = (
    std::sync::Arc<dyn ApprovalStore>,
    std::sync::Arc<dyn tool_runtime::task::TaskStore>,
);

/// Where calls wait for approval and tasks are kept, from `HR_APPROVALS`: `postgresql://…` for
/// PostgreSQL, `sqlite:PATH` for a SQLite file (one store, both roles); `None` (each process's
/// memory) when unset. A task's lease is `HR_TASK_LEASE_MS` (default 30 s).
pub async fn approval_store() -> Result<Option<Stores>, Box<dyn std::error::Error + Send + Sync>> {
    use tool_runtime_postgres::PostgresApprovals;
    use tool_runtime_sqlite::SqliteApprovals;
    let Some(url) = std::env::var("HR_APPROVALS").ok().filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    fn both<S: ApprovalStore + tool_runtime::task::TaskStore + 'static>(store: S) -> Stores {
        let store = std::sync::Arc::new(store);
        (store.clone(), store)
    }
    if url.starts_with("postgres") {
        return Ok(Some(both(PostgresApprovals::connect(&url).await?)));
    }
    match url.strip_prefix("sqlite:") {
        Some(path) => Ok(Some(both(SqliteApprovals::open(path)?))),
        None => {
            Err(format!("HR_APPROVALS: expected postgresql://… or sqlite:PATH, got {url:?}").into())
        }
    }
}

/// What replicas share besides the approval store, from the environment: the key that signs
/// `requestState` (`HR_STATE_KEY`, at least 32 characters; default a random key per process),
/// and how long an approval may take (`HR_APPROVAL_TIMEOUT_SECS`, default 600).
pub fn shared(
    server: tool_runtime_mcp::McpServer,
) -> Result<tool_runtime_mcp::McpServer, Box<dyn std::error::Error + Send + Sync>> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let server = match env("HR_APPROVAL_TIMEOUT_SECS").and_then(|s| s.parse().ok()) {
        Some(secs) => {
            let mut limits = server.limits().clone();
            limits.approval_timeout = std::time::Duration::from_secs(secs);
            server.with_limits(limits)
        }
        None => server,
    };
    Ok(match env("HR_STATE_KEY") {
        Some(key) => server
            .with_state_key(key.as_bytes())
            .map_err(|e| format!("HR_STATE_KEY: {e}"))?,
        None => server,
    })
}

/// Serves the HR tools: on stdio for the session [`configured_session`] names, or with
/// `--http ADDR` on Streamable HTTP, where every request needs an access token (see
/// [`resource_server`]) unless `--local-session` is given. What replicas share comes from the
/// environment ([`shared`]).
pub async fn serve_mcp(args: &[String]) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let Some(i) = args.iter().position(|a| a == "--http") else {
        let server = mcp_server(Login::Fixed(configured_session())).await?;
        return server.serve_stdio().await;
    };
    let addr: std::net::SocketAddr = args
        .get(i + 1)
        .ok_or("--http needs an address such as 127.0.0.1:8000")?
        .parse()?;
    let http = if args.iter().any(|a| a == "--local-session") {
        let server = mcp_server(Login::Fixed(configured_session())).await?;
        tool_runtime_mcp::http::HttpServer::new(server)
    } else {
        let auth = resource_server(addr).await?;
        let server = mcp_server(Login::Token).await?;
        tool_runtime_mcp::http::HttpServer::new(server).with_auth(auth)
    };
    let bound = http.bind(addr).await?;
    eprintln!(
        "hr-assistant MCP server on http://{}/mcp",
        bound.local_addr()?
    );
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    Ok(bound.serve_until(stop).await?)
}
