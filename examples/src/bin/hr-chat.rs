//! The HR assistant in a browser, its answer streamed as it is written (see `examples::chat`):
//! `hr-chat 127.0.0.1:8080`, then open http://127.0.0.1:8080/?pesan=Berapa%20sisa%20cuti%20saya%3F
//! The employee is `HR_NIK` (default K-001) with role `HR_PERAN`; the database is `HR_DB` (a
//! SQLite file, default in memory) with the case's figures.

use std::sync::Arc;
use std::time::Duration;

use examples::chat::{Chat, ScriptedModel, router};
use examples::hr::{configured_session, domain::Db};

#[tokio::main]
async fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".into());
    let db = match std::env::var("HR_DB") {
        Ok(path) => Db::open(path.as_ref()),
        Err(_) => Db::in_memory(),
    };
    let db = match db {
        Ok(db) => Arc::new(db),
        Err(e) => {
            eprintln!("hr-chat: the database: {e}");
            std::process::exit(1);
        }
    };
    let chat = Chat::new(
        db,
        configured_session(),
        ScriptedModel::new(Duration::from_millis(120)),
    );
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("hr-chat: cannot listen on {addr}: {e}");
            std::process::exit(1);
        }
    };
    eprintln!("hr-chat: http://{addr}/?pesan=Berapa%20sisa%20cuti%20saya%3F");
    if let Err(e) = axum::serve(listener, router(chat)).await {
        eprintln!("hr-chat: {e}");
        std::process::exit(1);
    }
}
