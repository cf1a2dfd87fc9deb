//! The example cases as tool sets, shared by the runnable examples, the tests and the benchmarks.

pub mod cuaca;
pub mod ekstraksi;
pub mod hr;
pub mod katering;
pub mod laporan_penjualan;
pub mod perpustakaan;
pub mod show;
