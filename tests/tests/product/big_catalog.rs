//! A catalog of 500 tools, as a company's grows: every example tool, and generated ones named
//! and described as its own tools would be (English and Indonesian), for the tests of what a
//! catalog costs (`tokens.rs`) and how its tools are found (`search.rs`).

use serde_json::{Value, json};
use tool_runtime::{Tool, ToolRef, ToolSet};

/// Areas of a company's work and what is kept there, for the generated tools.
const AREAS: &[(&str, &str, &str)] = &[
    ("cuti", "leave requests", "pengajuan cuti karyawan"),
    ("gaji", "payslips", "slip gaji karyawan"),
    ("reimburse", "expense claims", "klaim reimbursement"),
    (
        "inventaris",
        "office inventory items",
        "barang inventaris kantor",
    ),
    ("pelanggan", "customer accounts", "akun pelanggan"),
    ("faktur", "invoices", "faktur penjualan"),
    ("pengiriman", "shipments", "pengiriman barang"),
    ("tiket", "support tickets", "tiket dukungan pelanggan"),
    ("jadwal", "meeting room bookings", "pemesanan ruang rapat"),
    ("proyek", "project milestones", "tonggak proyek"),
    ("kontrak", "supplier contracts", "kontrak pemasok"),
    ("absensi", "attendance records", "catatan kehadiran"),
    ("pelatihan", "training enrolments", "pendaftaran pelatihan"),
    ("aset", "company laptops", "laptop milik perusahaan"),
    ("anggaran", "department budgets", "anggaran departemen"),
    ("rekrutmen", "job applications", "lamaran kerja"),
];

/// What a generated tool does to an area's records.
const ACTIONS: &[(&str, &str, &str)] = &[
    ("cek", "Look up one of the", "Ambil satu"),
    ("daftar", "List the caller's", "Tampilkan daftar"),
    (
        "buat",
        "Create a new entry among the",
        "Buat entri baru untuk",
    ),
    ("ubah", "Change one of the", "Ubah satu"),
    ("batalkan", "Cancel one of the", "Batalkan satu"),
    ("ekspor", "Export as CSV the", "Ekspor ke CSV semua"),
];

/// `n` tools defined at run time, named and described as a company's own tools would be
/// (English and Indonesian), each with one to three arguments.
fn generated(n: usize) -> Vec<ToolRef> {
    let mut tools = Vec::with_capacity(n);
    'all: for round in 0.. {
        for (area, english, indonesian) in AREAS {
            for (verb, en_verb, id_verb) in ACTIONS {
                if tools.len() == n {
                    break 'all;
                }
                let name = format!("{verb}-{area}-{round}");
                let description = if (tools.len() + round) % 2 == 0 {
                    format!(
                        "{en_verb} {english} by its number; returns the record and when it was last updated. Use when the user names one of their {english}."
                    )
                } else {
                    format!(
                        "{id_verb} {indonesian} berdasarkan nomornya; mengembalikan data beserta waktu pembaruan terakhirnya. Pakai saat pengguna menyebut {indonesian}."
                    )
                };
                let mut properties = serde_json::Map::new();
                properties.insert(
                    "nomor".into(),
                    json!({"type": "string", "description": format!("The number of the {english} entry, as printed on it"), "minLength": 3, "maxLength": 20}),
                );
                if round % 2 == 1 {
                    properties.insert(
                        "tahun".into(),
                        json!({"type": "integer", "description": "Tahun data; tahun ini bila tidak disebut", "minimum": 2000, "maximum": 2100}),
                    );
                }
                if *verb == "ubah" {
                    properties.insert(
                        "catatan".into(),
                        json!({"type": "string", "description": "What to write on the entry", "maxLength": 500}),
                    );
                }
                let required: Vec<&String> = properties.keys().take(1).collect();
                let schema = json!({
                    "type": "object",
                    "properties": properties,
                    "required": required,
                    "additionalProperties": false,
                });
                let tool = Tool::define(name, description, schema)
                    .build_fn(|_| async { Ok(Value::Null) })
                    .expect("a generated tool is a valid definition");
                tools.push(ToolRef::from(tool));
            }
        }
    }
    tools
}

/// Every example tool, and generated ones to make 500.
pub fn catalog() -> ToolSet {
    let mut examples: Vec<ToolRef> = examples::hr::tool_set().iter().cloned().collect();
    examples.extend(examples::perpustakaan::tool_set().iter().cloned());
    let more = 500 - examples.len();
    examples.extend(generated(more));
    ToolSet::new(examples).expect("the catalog's tools have distinct names")
}

/// OpenAI takes at most 128 functions a request, Gemini 128 function declarations: a request of
/// 129 is refused when it is written, naming the limit, in the three APIs; 128 are written.
/// Anthropic and Bedrock document no such limit: 500 are written.
#[test]
fn a_request_over_a_providers_tool_limit_is_refused_naming_it() {
    use tool_runtime::Api;
    use tool_runtime::provider::{ExportError, Request, RequestError, RequestLimit};
    let all: Vec<ToolRef> = catalog().iter().cloned().collect();
    let set = |n: usize| ToolSet::new(all.iter().take(n).cloned()).unwrap();
    let written =
        |api: Api, set: &ToolSet| api.provider().request(&Request::new("m").tools(set), &[]);
    for api in [Api::OPENAI_CHAT, Api::OPENAI_RESPONSES, Api::GEMINI] {
        let fits = written(api, &set(128)).unwrap().body;
        let tools = fits["tools"].as_array().unwrap();
        let count = if api.id() == Api::GEMINI.id() {
            tools[0]["functionDeclarations"].as_array().unwrap().len()
        } else {
            tools.len()
        };
        assert_eq!(count, 128, "{}", api.id());
        let refused = written(api, &set(129)).unwrap_err();
        let RequestError::Tools(e) = &refused else {
            panic!("{refused:?}");
        };
        assert!(
            matches!(
                e,
                ExportError::Limit {
                    limit: RequestLimit::Tools,
                    found: 129,
                    allowed: 128,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(
            e.to_string()
                .contains("129 tools in one request, over the limit of 128"),
            "{e}"
        );
    }
    for api in [Api::ANTHROPIC, Api::BEDROCK_CONVERSE] {
        assert!(written(api, &set(500)).is_ok(), "{}", api.id());
    }
}
