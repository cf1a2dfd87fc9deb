//! Toolset lints: each fires on a set built to break it, and stays quiet on the examples.

use tool_runtime::lint::{self, Lint};
use tool_runtime::{ToolArg, ToolRef, ToolSet, tool};

fn ids(set: &ToolSet) -> Vec<(&'static str, String)> {
    lint::check(set)
        .into_iter()
        .map(|l: Lint| (l.id, l.tool))
        .collect()
}

#[test]
fn the_examples_are_lint_clean() {
    for set in [
        ToolSet::new([examples::katering::pesan_katering::tool()]).unwrap(),
        ToolSet::new([examples::laporan_penjualan::buat_laporan::tool()]).unwrap(),
        ToolSet::new([examples::cuaca::cuaca_terkini::tool()]).unwrap(),
        examples::hr::tool_set(),
        examples::perpustakaan::tool_set(),
    ] {
        lint::assert_clean(&set);
    }
}

#[tool(
    description = "Cari buku di katalog perpustakaan berdasarkan judul atau penulis dan kembalikan daftar buku."
)]
fn cari_buku(
    #[arg(description = "Kata kunci judul atau penulis; tanyakan bila tidak disebut")] kata: String,
) -> Vec<String> {
    vec![kata]
}

#[tool(
    description = "Ambil detail lengkap satu buku di katalog perpustakaan berdasarkan judul dan penulis."
)]
fn detail_buku(
    #[arg(description = "Kata kunci judul; tanyakan bila tidak disebut")] kata: String,
) -> String {
    kata
}

#[tool(
    description = "Ambil detail lengkap satu buku di katalog perpustakaan berdasarkan judul dan penulis.",
    not_for = "mencari banyak buku (pakai cari_buku)",
    name = "detail_buku_dengan_batas"
)]
fn detail_buku_batas(
    #[arg(description = "Kata kunci judul; tanyakan bila tidak disebut")] kata: String,
) -> String {
    kata
}

#[test]
fn overlapping_tools_must_name_each_other() {
    let set = ToolSet::new([cari_buku::tool(), detail_buku::tool()]).unwrap();
    assert!(
        ids(&set).contains(&("overlap", "cari_buku".into())),
        "{:?}",
        ids(&set)
    );
    let bounded = ToolSet::new([cari_buku::tool(), detail_buku_batas::tool()]).unwrap();
    assert!(
        !ids(&bounded).iter().any(|(id, _)| *id == "overlap"),
        "{:?}",
        ids(&bounded)
    );
}

macro_rules! eleven {
    ($($n:ident)*) => {
        $(
            #[tool(description = "Ambil angka uji; pakai saat menguji batas jumlah alat.", allow_lint = "overlap: alat uji sengaja mirip")]
            fn $n() -> u8 { 1 }
        )*
        fn eleven() -> ToolSet { ToolSet::new([$($n::tool()),*]).unwrap() }
    };
}
eleven!(a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11);

#[test]
fn more_than_ten_tools_is_one_lint_for_the_set() {
    let found = ids(&eleven());
    assert_eq!(
        found,
        [("too-many-tools", String::new())],
        "allow_lint silences the overlaps"
    );
    let ten = ToolSet::new(eleven().iter().take(10)).unwrap();
    assert!(ids(&ten).is_empty());
}

#[tool(description = "Tool cuaca")]
fn cuaca() -> String {
    String::new()
}

#[test]
fn a_description_says_what_comes_back_and_when() {
    let found = ids(&ToolSet::new([cuaca::tool()]).unwrap());
    assert!(
        found.contains(&("no-returns", "cuaca".into()))
            && found.contains(&("no-when", "cuaca".into())),
        "{found:?}"
    );
}

#[tool(description = "Ambil laporan penjualan; pakai saat pengguna meminta angka penjualan.")]
fn laporan_kasar(
    #[arg(description = "Wilayah: jakarta, surabaya atau medan")] wilayah: String,
    #[arg(description = "Nomor halaman", range = 1..=100)] halaman: Option<u32>,
) -> String {
    format!("{wilayah}{halaman:?}")
}

#[derive(ToolArg, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum Wilayah {
    Jakarta,
    Surabaya,
    Medan,
}

#[tool(
    description = "Ambil laporan penjualan; pakai saat pengguna meminta angka penjualan.",
    allow_lint = "optional-without-rule: halaman kosong selalu berarti halaman pertama di API ini"
)]
fn laporan_baik(
    #[arg(description = "Wilayah penjualan")] wilayah: Wilayah,
    #[arg(description = "Nomor halaman", range = 1..=100)] halaman: Option<u32>,
) -> String {
    let _ = wilayah;
    format!("{halaman:?}")
}

#[test]
fn arguments_close_their_sets_and_say_what_absence_means() {
    let found = ids(&ToolSet::new([laporan_kasar::tool()]).unwrap());
    assert_eq!(
        found,
        [
            ("closed-set-string", "laporan_kasar".into()),
            ("optional-without-rule", "laporan_kasar".into())
        ]
    );
    let good = ToolSet::new([laporan_baik::tool()]).unwrap();
    assert!(ids(&good).is_empty(), "{:?}", ids(&good));
    assert_eq!(
        laporan_baik::tool().silences_lint("optional-without-rule"),
        Some("halaman kosong selalu berarti halaman pertama di API ini")
    );
}

#[tool(
    description = "Returns one page of the sales report; use when the user asks for sales figures."
)]
fn sales_page(
    #[arg(description = "Page number; omit it to get the first page", range = 1..=100)]
    page: Option<u32>,
    #[arg(description = "Region code, null if the user names no region")] region: Option<String>,
) -> String {
    format!("{page:?}{region:?}")
}

#[test]
fn english_descriptions_are_read_as_well_as_indonesian_ones() {
    let found = ids(&ToolSet::new([sales_page::tool()]).unwrap());
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn every_lint_fires_somewhere_and_each_has_an_id_an_explanation_and_an_english_fix() {
    let mut tools: Vec<ToolRef> = eleven().iter().cloned().collect();
    tools.extend(
        [
            cuaca::tool(),
            laporan_kasar::tool(),
            cari_buku::tool(),
            detail_buku::tool(),
            setujui_klaim::tool(),
        ]
        .map(ToolRef::from),
    );
    let set = ToolSet::new(tools).unwrap();
    let mut lints = lint::check(&set);
    // The token budget's lints come from their own check, with the host's budget.
    let budget = tool_runtime::tokens::Budget {
        per_tool: 1,
        per_request: 1,
    };
    lints.extend(lint::check_tokens(
        &set,
        tool_runtime::Api::OPENAI_CHAT,
        budget,
    ));
    // One of these two fires, as the program keeps JSON keys in order or sorts them.
    let cannot = if lint::keeps_order() {
        "unordered-json"
    } else {
        "decision-before-reason"
    };
    for (id, _) in lint::LINTS.iter().filter(|(id, _)| *id != cannot) {
        assert!(
            lints.iter().any(|l| l.id == *id),
            "`{id}` never fired: {lints:?}"
        );
    }
    for l in &lints {
        assert!(lint::LINTS.iter().any(|(id, _)| *id == l.id), "{l}");
        assert!(!l.message.is_empty() && !l.fix.is_empty(), "{l}");
        // The toolkit's own words are English; Indonesian appears only inside quoted names.
        for word in ["pakai", "kosongkan", "bila", "ambil", "seed"] {
            assert!(!l.fix.to_lowercase().contains(word), "{l}");
        }
    }
}

/// The seed's rule for anything the model fills in order: the reason before the decision.
#[derive(ToolArg, serde::Deserialize)]
#[allow(dead_code)]
struct KeputusanDulu {
    /// Apakah abstrak relevan
    relevan: bool,
    /// Alasan singkat dari isi abstrak
    alasan: String,
}

#[derive(ToolArg, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum Status {
    Diterima,
    Ditolak,
}

/// A decision that may be null (an enum behind `$ref`), and a reason found by its description.
#[derive(ToolArg, serde::Deserialize)]
#[allow(dead_code)]
struct Penilaian {
    /// Judul yang dinilai
    judul: String,
    /// Keputusan penilai; null bila belum bisa diputuskan
    status: Option<Status>,
    /// Jelaskan pertimbangan penilai dalam dua kalimat
    catatan: String,
}

/// The order is right at the top but wrong inside a nested type.
#[derive(ToolArg, serde::Deserialize)]
#[allow(dead_code)]
struct Laporan {
    /// Ringkasan temuan
    ringkasan: String,
    /// Penilaian tiap judul
    penilaian: Vec<Penilaian>,
}

/// Silenced, with the reason.
#[derive(ToolArg, serde::Deserialize)]
#[arg(
    allow_lint = "decision-before-reason: keputusan sudah diambil manusia; model hanya menuliskan alasannya"
)]
#[allow(dead_code)]
struct Catatan {
    /// Keputusan manusia
    relevan: bool,
    /// Alasan keputusan itu
    alasan: String,
}

fn decision_lints<T: ToolArg>() -> Vec<String> {
    lint::check_output::<T>()
        .into_iter()
        .map(|l| {
            assert_eq!(l.id, "decision-before-reason");
            format!("{}: {}", l.tool, l.fix)
        })
        .collect()
}

#[test]
fn a_reason_after_its_decision_is_reported_with_the_fix() {
    assert_eq!(
        decision_lints::<KeputusanDulu>(),
        ["KeputusanDulu: declare `alasan` before `relevan`."]
    );
    assert_eq!(
        decision_lints::<Penilaian>(),
        ["Penilaian: declare `catatan` before `status`."]
    );
    assert_eq!(
        decision_lints::<Laporan>(),
        ["Laporan: declare `catatan` before `status`."],
        "nested types are checked too"
    );
    let message = &lint::check_output::<KeputusanDulu>()[0].message;
    assert!(message.contains("fills fields in order"), "{message}");
}

#[test]
fn reason_first_and_silenced_types_are_quiet() {
    assert_eq!(
        decision_lints::<examples::ekstraksi::Relevansi>(),
        Vec::<String>::new()
    );
    assert_eq!(decision_lints::<Catatan>(), Vec::<String>::new());
    assert_eq!(
        <Catatan as ToolArg>::silences_lint("decision-before-reason"),
        Some("keputusan sudah diambil manusia; model hanya menuliskan alasannya")
    );
    // Types without a decision, or whose reasons come first, say nothing.
    assert!(lint::check_output::<examples::ekstraksi::Paper>().is_empty());
    assert!(lint::check_output::<examples::ekstraksi::Lowongan>().is_empty());
}

#[tool(
    description = "Setujui atau tolak klaim reimbursement dan kembalikan statusnya; pakai saat atasan memutuskan klaim."
)]
fn setujui_klaim(
    #[arg(description = "Nomor klaim, seperti R-0001", pattern = "^R-[0-9]{4}$")] klaim: String,
    #[arg(description = "Setujui klaim ini")] setuju: bool,
    #[arg(description = "Alasan keputusan, untuk karyawan")] alasan: String,
) -> String {
    format!("{klaim}: {setuju} ({alasan})")
}

#[tool(
    description = "Setujui atau tolak klaim reimbursement dan kembalikan statusnya; pakai saat atasan memutuskan klaim.",
    allow_lint = "decision-before-reason: atasan sudah memutuskan di layar; model hanya meneruskannya"
)]
fn setujui_klaim_diam(
    #[arg(description = "Nomor klaim, seperti R-0001", pattern = "^R-[0-9]{4}$")] klaim: String,
    #[arg(description = "Setujui klaim ini")] setuju: bool,
    #[arg(description = "Alasan keputusan, untuk karyawan")] alasan: String,
) -> String {
    format!("{klaim}: {setuju} ({alasan})")
}

#[test]
fn tool_arguments_the_model_fills_keep_the_reason_first_too() {
    let found = lint::check(&ToolSet::new([setujui_klaim::tool()]).unwrap());
    let fixes: Vec<_> = found.iter().map(|l| (l.id, l.fix.as_str())).collect();
    assert_eq!(
        fixes,
        [(
            "decision-before-reason",
            "declare `alasan` before `setuju`."
        )]
    );
    assert!(
        found[0].message.starts_with("argument `alasan`"),
        "{}",
        found[0]
    );
    let quiet = lint::check(&ToolSet::new([setujui_klaim_diam::tool()]).unwrap());
    assert!(quiet.is_empty(), "{quiet:?}");
}

/// A tool per description, each returning what it is given.
macro_rules! described {
    ($($name:ident: $d:literal;)*) => {$(
        #[tool(description = $d)]
        fn $name() -> bool {
            true
        }
    )*};
}

/// A tool per description of an optional argument.
macro_rules! optional {
    ($($name:ident: $d:literal;)*) => {$(
        #[tool(description = "Returns the matching items; use when the user asks for them.")]
        fn $name(#[arg(description = $d, range = 1..=5)] x: Option<u8>) -> bool {
            x.is_some()
        }
    )*};
}

/// Free strings whose descriptions do not list a closed set.
macro_rules! free_string {
    ($($name:ident: $d:literal;)*) => {$(
        #[tool(description = "Returns the matching items; use when the user asks for them.")]
        fn $name(#[arg(description = $d, length = 1..=50)] x: String) -> String {
            x
        }
    )*};
}

described! {
    retrieves: "Retrieves the status of an order. Use it when the user asks where an order is.";
    whenever: "Returns today's rates whenever the user mentions a currency.";
    call_this_for: "Looks up a word in the dictionary. Call this for questions about meaning.";
    if_the_user: "Gives the opening hours, if the user asks about a branch.";
    only_for: "Shows the invoice total; only for invoices already issued.";
    mengembalikan: "Mengembalikan status pesanan. Gunakan ketika pengguna bertanya posisi paket.";
    apabila: "Ambil kurs hari ini apabila pengguna menyebut mata uang.";
    hanya_untuk: "Menampilkan total tagihan; hanya untuk tagihan yang sudah terbit.";
    dipakai: "Membaca jadwal dokter. Dipakai kalau pasien menanyakan jam praktik.";
}

optional! {
    null_for_all: "Only items of this priority; null for all";
    if_omitted: "Page number; if omitted, the first page";
    when_missing: "Branch code; when missing, every branch";
    null_untuk: "Hanya butir dengan prioritas ini; null untuk semua";
    kosong_berarti: "Kode cabang; kosong berarti semua cabang";
    apabila_tidak: "Nomor halaman; apabila tidak disebut, halaman pertama";
}

free_string! {
    full_name: "The customer's full name, as written on the card";
    two_choices: "A short note, such as a reason or a comment";
    catatan: "Catatan bebas, misalnya alasan atau komentar";
    nama: "Nama lengkap pelanggan, seperti tertulis di kartu";
}

optional! {
    bare: "Page number";
    nullable: "Nullable page number";
}

/// The lints that cry wolf no longer: each finding below was reported on a description that
/// says exactly what the lint asks for, in English or Indonesian.
#[test]
fn lints_stay_quiet_on_descriptions_that_say_what_they_ask() {
    let quiet = [
        retrieves::tool(),
        whenever::tool(),
        call_this_for::tool(),
        if_the_user::tool(),
        only_for::tool(),
        mengembalikan::tool(),
        apabila::tool(),
        hanya_untuk::tool(),
        dipakai::tool(),
        null_for_all::tool(),
        if_omitted::tool(),
        when_missing::tool(),
        null_untuk::tool(),
        kosong_berarti::tool(),
        apabila_tidak::tool(),
        full_name::tool(),
        two_choices::tool(),
        catatan::tool(),
        nama::tool(),
    ];
    for tool in quiet {
        let alone = ToolSet::new([tool]).unwrap();
        assert!(
            lint::check(&alone).is_empty(),
            "{}: {:?}",
            tool.name(),
            lint::check(&alone)
        );
    }
    // Distinct tools do not overlap, however many (up to ten).
    let ten = ToolSet::new(quiet[..9].iter().copied().chain([full_name::tool()])).unwrap();
    assert!(lint::check(&ten).is_empty(), "{:?}", lint::check(&ten));
    // And they still speak when the rule is missing: "nullable" says nothing of what null means.
    for tool in [bare::tool(), nullable::tool()] {
        let found = ids(&ToolSet::new([tool]).unwrap());
        assert_eq!(found, [("optional-without-rule", tool.name().into())]);
    }
}

/// A fix speaks of no particular domain: the same text in any tool set.
#[test]
fn fixes_name_no_domain() {
    let lints = lint::check(&ToolSet::new([cuaca::tool(), laporan_kasar::tool()]).unwrap());
    assert!(!lints.is_empty());
    for l in lints {
        for word in ["leave", "cuti", "days", "sales"] {
            assert!(!l.fix.contains(word), "{l}");
        }
    }
}
