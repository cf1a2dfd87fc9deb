//! HR data: employees, leave and reimbursements in SQLite. No toolkit imports: the rules live
//! here and are tested like any other code; the tools are thin shells over them.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use chrono::NaiveDate;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// The database, shared by every call: one connection for writes behind a lock, and one for
/// reads (a file's), so a booking that holds its write transaction open does not hold up the
/// reads of this process's other calls (a login, a balance).
pub struct Db {
    conn: Mutex<Connection>,
    /// Reads, for a database in a file (an in-memory one has only its one connection).
    reader: Option<Mutex<Connection>>,
    /// How long a booking holds its transaction open before writing (the concurrency tests
    /// widen the window in which two bookings could interleave).
    booking_delay: Duration,
    /// How long reading leave history waits first (the attack script's slow calls).
    history_delay: Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Karyawan {
    pub nik: String,
    pub nama: String,
    pub sisa_cuti: u32,
    pub cuti_terpakai: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Reimburse {
    pub id: String,
    pub jumlah: u64,
    pub status: String,
    pub tanggal: String,
}

/// Why a leave request is refused by the rules.
#[derive(Debug, Clone, PartialEq)]
pub enum Penolakan {
    KaryawanTidakDitemukan,
    KuotaKurang {
        sisa: u32,
    },
    /// A day of the request is already booked.
    Bentrok {
        tanggal: NaiveDate,
    },
}

impl Db {
    /// Opens (and on first use creates and seeds) the database at `path`.
    pub fn open(path: &Path) -> rusqlite::Result<Db> {
        let mut db = Self::init(Connection::open(path)?)?;
        let reader = Connection::open(path)?;
        reader.busy_timeout(Duration::from_secs(10))?;
        db.reader = Some(Mutex::new(reader));
        Ok(db)
    }

    /// A fresh seeded database in memory, for tests.
    pub fn in_memory() -> rusqlite::Result<Db> {
        Self::init(Connection::open_in_memory()?)
    }

    fn init(conn: Connection) -> rusqlite::Result<Db> {
        // Several processes may share the file: a writer waits for another's transaction
        // rather than failing at once.
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.execute_batch(
            "BEGIN IMMEDIATE;
             CREATE TABLE IF NOT EXISTS karyawan (
                nik TEXT PRIMARY KEY, nama TEXT NOT NULL, atasan TEXT,
                sisa_cuti INTEGER NOT NULL CHECK (sisa_cuti >= 0),
                cuti_terpakai INTEGER NOT NULL);
             CREATE TABLE IF NOT EXISTS cuti (
                nik TEXT NOT NULL, tanggal TEXT NOT NULL, UNIQUE (nik, tanggal));
             CREATE TABLE IF NOT EXISTS persetujuan (
                ticket TEXT PRIMARY KEY, tool TEXT NOT NULL, arguments TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS reimburse (
                id TEXT PRIMARY KEY, nik TEXT NOT NULL, jumlah INTEGER NOT NULL,
                status TEXT NOT NULL, tanggal TEXT NOT NULL);",
        )?;
        let empty: i64 = conn.query_row("SELECT COUNT(*) FROM karyawan", [], |r| r.get(0))?;
        if empty == 0 {
            // The case's figures: Sari has 7 days left and one reimbursement in progress; Budi
            // has used all 12 and has none. Dewi manages both.
            conn.execute_batch(
                "INSERT INTO karyawan VALUES
                    ('M-001', 'Dewi', NULL, 10, 2),
                    ('K-001', 'Sari', 'M-001', 7, 5),
                    ('K-002', 'Budi', 'M-001', 0, 12);
                 INSERT INTO cuti VALUES
                    ('K-001', '2026-02-16'), ('K-001', '2026-02-17'), ('K-001', '2026-06-02'),
                    ('K-001', '2026-06-03'), ('K-001', '2026-06-04'), ('K-002', '2025-12-29');
                 INSERT INTO reimburse VALUES ('R-88', 'K-001', 450000, 'diproses', '2026-08-30');",
            )?;
        }
        conn.execute_batch("COMMIT")?;
        Ok(Db {
            conn: Mutex::new(conn),
            reader: None,
            booking_delay: Duration::ZERO,
            history_delay: Duration::ZERO,
        })
    }

    /// Holds every booking's transaction open for `delay` after it has read the balance.
    pub fn with_booking_delay(mut self, delay: Duration) -> Db {
        self.booking_delay = delay;
        self
    }

    /// Makes every reading of leave history take `delay` longer, as a slow HR system would
    /// (without holding the database: other calls go on meanwhile).
    pub fn with_history_delay(mut self, delay: Duration) -> Db {
        self.history_delay = delay;
        self
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The connection for a read.
    fn read(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.reader
            .as_ref()
            .unwrap_or(&self.conn)
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    pub fn karyawan(&self, nik: &str) -> rusqlite::Result<Option<Karyawan>> {
        self.read()
            .query_row(
                "SELECT nik, nama, sisa_cuti, cuti_terpakai FROM karyawan WHERE nik = ?1",
                params![nik],
                |r| {
                    Ok(Karyawan {
                        nik: r.get(0)?,
                        nama: r.get(1)?,
                        sisa_cuti: r.get(2)?,
                        cuti_terpakai: r.get(3)?,
                    })
                },
            )
            .optional()
    }

    /// Reimbursements of an employee; `None` when the employee does not exist (an empty list
    /// means none were filed).
    pub fn reimburse(&self, nik: &str) -> rusqlite::Result<Option<Vec<Reimburse>>> {
        if self.karyawan(nik)?.is_none() {
            return Ok(None);
        }
        let conn = self.read();
        let mut q = conn.prepare(
            "SELECT id, jumlah, status, tanggal FROM reimburse WHERE nik = ?1 ORDER BY tanggal",
        )?;
        let rows = q.query_map(params![nik], |r| {
            Ok(Reimburse {
                id: r.get(0)?,
                jumlah: r.get::<_, i64>(1)?.max(0) as u64,
                status: r.get(2)?,
                tanggal: r.get(3)?,
            })
        })?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map(Some)
    }

    /// Dates of leave taken in `tahun`; `None` when the employee does not exist.
    pub fn riwayat_cuti(&self, nik: &str, tahun: u16) -> rusqlite::Result<Option<Vec<String>>> {
        std::thread::sleep(self.history_delay);
        if self.karyawan(nik)?.is_none() {
            return Ok(None);
        }
        let conn = self.read();
        let mut q = conn.prepare("SELECT tanggal FROM cuti WHERE nik = ?1 AND substr(tanggal, 1, 4) = ?2 ORDER BY tanggal")?;
        let rows = q.query_map(params![nik, tahun.to_string()], |r| r.get(0))?;
        rows.collect::<rusqlite::Result<Vec<String>>>().map(Some)
    }

    /// The team a manager leads, with each member's leave balance.
    pub fn tim(&self, atasan: &str) -> rusqlite::Result<Vec<Karyawan>> {
        let conn = self.read();
        let mut q = conn.prepare(
            "SELECT nik, nama, sisa_cuti, cuti_terpakai FROM karyawan WHERE atasan = ?1 ORDER BY nik",
        )?;
        let rows = q.query_map(params![atasan], |r| {
            Ok(Karyawan {
                nik: r.get(0)?,
                nama: r.get(1)?,
                sisa_cuti: r.get(2)?,
                cuti_terpakai: r.get(3)?,
            })
        })?;
        rows.collect()
    }

    /// Keeps a call that waits for approval (see [`crate::hr::Persetujuan`]).
    pub fn simpan_persetujuan(
        &self,
        ticket: &str,
        tool: &str,
        arguments: &str,
    ) -> rusqlite::Result<()> {
        self.conn().execute(
            "INSERT INTO persetujuan (ticket, tool, arguments) VALUES (?1, ?2, ?3)",
            params![ticket, tool, arguments],
        )?;
        Ok(())
    }

    /// Takes a waiting call out, once: deleting the row is what hands it out, so two
    /// processes taking the same ticket get it once between them.
    pub fn ambil_persetujuan(&self, ticket: &str) -> rusqlite::Result<Option<(String, String)>> {
        self.conn()
            .query_row(
                "DELETE FROM persetujuan WHERE ticket = ?1 RETURNING tool, arguments",
                params![ticket],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
    }

    /// Whether `nik` leads anyone.
    pub fn memimpin_tim(&self, nik: &str) -> rusqlite::Result<bool> {
        self.read().query_row(
            "SELECT EXISTS (SELECT 1 FROM karyawan WHERE atasan = ?1)",
            params![nik],
            |r| r.get(0),
        )
    }

    /// Books `hari` consecutive days of leave from `mulai`, if the balance allows and none of
    /// the days is booked already. Returns the balance left.
    ///
    /// One write transaction, taken before anything is read: two bookings (from any number of
    /// processes) run one after the other, and the balance can never go below zero (the update
    /// is conditional on it, and the table refuses it besides).
    pub fn ajukan_cuti(
        &self,
        nik: &str,
        mulai: NaiveDate,
        hari: u32,
    ) -> rusqlite::Result<Result<u32, Penolakan>> {
        self.ajukan_cuti_lalu(nik, mulai, hari, || Ok(()))
    }

    /// [`ajukan_cuti`](Self::ajukan_cuti), asking `sebelum_commit` right before the booking is
    /// committed (its commit point): when it answers `Err`, nothing is booked and the error is
    /// returned.
    pub fn ajukan_cuti_lalu<E: From<rusqlite::Error>>(
        &self,
        nik: &str,
        mulai: NaiveDate,
        hari: u32,
        sebelum_commit: impl FnOnce() -> Result<(), E>,
    ) -> Result<Result<u32, Penolakan>, E> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let sisa: Option<u32> = tx
            .query_row(
                "SELECT sisa_cuti FROM karyawan WHERE nik = ?1",
                params![nik],
                |r| r.get(0),
            )
            .optional()?;
        let Some(sisa) = sisa else {
            return Ok(Err(Penolakan::KaryawanTidakDitemukan));
        };
        if sisa < hari {
            return Ok(Err(Penolakan::KuotaKurang { sisa }));
        }
        std::thread::sleep(self.booking_delay);
        let days: Vec<NaiveDate> = mulai.iter_days().take(hari as usize).collect();
        for &day in &days {
            let booked: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM cuti WHERE nik = ?1 AND tanggal = ?2)",
                params![nik, day.to_string()],
                |r| r.get(0),
            )?;
            if booked {
                return Ok(Err(Penolakan::Bentrok { tanggal: day }));
            }
            tx.execute(
                "INSERT INTO cuti VALUES (?1, ?2)",
                params![nik, day.to_string()],
            )?;
        }
        let updated = tx.execute(
            "UPDATE karyawan SET sisa_cuti = sisa_cuti - ?2, cuti_terpakai = cuti_terpakai + ?2
             WHERE nik = ?1 AND sisa_cuti >= ?2",
            params![nik, hari],
        )?;
        if updated != 1 {
            // Unreachable while this transaction holds the write lock; kept as the rule itself.
            return Ok(Err(Penolakan::KuotaKurang { sisa }));
        }
        // Dropping the transaction rolls it back.
        sebelum_commit()?;
        tx.commit()?;
        Ok(Ok(sisa - hari))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_list_and_unknown_employee_are_different() {
        let db = Db::in_memory().unwrap();
        assert_eq!(db.reimburse("K-002").unwrap(), Some(vec![]));
        assert_eq!(db.reimburse("K-999").unwrap(), None);
    }

    #[test]
    fn leave_is_booked_only_within_the_balance() {
        let db = Db::in_memory().unwrap();
        assert_eq!(
            db.ajukan_cuti("K-002", date("2026-12-01"), 1).unwrap(),
            Err(Penolakan::KuotaKurang { sisa: 0 })
        );
        assert_eq!(
            db.ajukan_cuti("K-001", date("2026-12-30"), 3).unwrap(),
            Ok(4)
        );
        let dates = db.riwayat_cuti("K-001", 2027).unwrap().unwrap();
        assert_eq!(dates, ["2027-01-01"]);
    }

    #[test]
    fn a_day_is_booked_once() {
        let db = Db::in_memory().unwrap();
        assert_eq!(
            db.ajukan_cuti("K-001", date("2026-12-01"), 2).unwrap(),
            Ok(5)
        );
        assert_eq!(
            db.ajukan_cuti("K-001", date("2026-11-30"), 3).unwrap(),
            Err(Penolakan::Bentrok {
                tanggal: date("2026-12-01")
            })
        );
        // The refused request changed nothing: not its first day, not the balance.
        assert_eq!(db.karyawan("K-001").unwrap().unwrap().sisa_cuti, 5);
        assert!(
            !db.riwayat_cuti("K-001", 2026)
                .unwrap()
                .unwrap()
                .contains(&"2026-11-30".to_string())
        );
    }

    fn date(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }
}
