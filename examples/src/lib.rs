//! The example cases as tool sets, shared by the runnable examples, the tests and the benchmarks.

#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../docs/deploying.md")]
pub struct DeployingDoctests;

pub mod cuaca;
pub mod ekstraksi;
pub mod hr;
pub mod katering;
pub mod laporan_penjualan;
pub mod mock_provider;
pub mod perpustakaan;
pub mod show;

use std::sync::Arc;

use tool_runtime::{Context, ToolSet};

/// Every example tool in one set (nine), and a context that can run each of them: the HR session
/// of a manager on a fresh in-memory database, and a library member. For tests and benches that
/// go over all tools.
pub fn every_tool() -> (ToolSet, Context) {
    let (library, hr) = (perpustakaan::tool_set(), hr::tool_set());
    let set = ToolSet::new([
        katering::pesan_katering::tool(),
        laporan_penjualan::buat_laporan::tool(),
        cuaca::cuaca_terkini::tool(),
    ])
    .and_then(|set| set.with_tools(library.iter().cloned()))
    .and_then(|set| set.with_tools(hr.iter().cloned()))
    .expect("the example tools have distinct names");
    let db = Arc::new(hr::domain::Db::in_memory().expect("an in-memory database opens"));
    let cx = hr::Session::new("M-001", hr::Peran::Manajer)
        .context(db)
        .with(perpustakaan::Anggota { id: "A-001".into() });
    (set, cx)
}
