//! Every path a call can take reads a number as the schema the caller was shown says, and hands
//! the tool exactly that number: the tool set (`ToolSet::call`), stdio (the transport's own lane
//! and rmcp's), stateless HTTP (the direct path) and an HTTP session (rmcp's), and a gateway's
//! remote tools. The numbers sit near each integer type's bounds and each power of two, near
//! the edges of the doubles (2^-1074 to 2^1023) and of `0..=1`, in every spelling JSON allows
//! (a fraction, an exponent, more digits than a double holds, halfway between two doubles),
//! written into the request text as they are. The oracle is exact decimal arithmetic
//! (`tests/number_oracle.py`): the verdict, and the integer or the double the tool must get.
//!
//! serde_json (without `float_roundtrip`) reads `4503599627370495.5` as the integer
//! `4503599627370495`; a path that trusted it handed that integer to a tool whose schema takes
//! integers only.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tool_runtime::{Context, ToolSet};
use tool_runtime_mcp::McpServer;
use tool_runtime_mcp::gateway::Gateway;
use tool_runtime_mcp::http::HttpServer;
use tool_runtime_mcp::remote::{Remote, RemoteOptions};

use crate::common::{Session, python};

/// One number sent to one probe tool: `kind` names its schema for the oracle.
#[derive(Clone, Debug)]
struct Case {
    tool: &'static str,
    kind: &'static str,
    /// The arguments, the number written into them as it is.
    arguments: String,
    /// The number's text.
    text: String,
}

/// The oracle's verdict: what the tool must receive, or `None` when the number is refused.
type Verdict = Option<String>;

const INTEGER_TOOLS: [(&str, &str, i128, i128); 8] = [
    ("echo_u8", "u8", 0, u8::MAX as i128),
    ("echo_i8", "i8", i8::MIN as i128, i8::MAX as i128),
    ("echo_u16", "u16", 0, u16::MAX as i128),
    ("echo_i16", "i16", i16::MIN as i128, i16::MAX as i128),
    ("echo_u32", "u32", 0, u32::MAX as i128),
    ("echo_i32", "i32", i32::MIN as i128, i32::MAX as i128),
    ("echo_u64", "u64", 0, u64::MAX as i128),
    ("echo_i64", "i64", i64::MIN as i128, i64::MAX as i128),
];

/// A small deterministic generator (xorshift), so a failure names a case that comes back.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn digits(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from(b'0' + self.below(10) as u8))
            .collect()
    }
}

/// Spellings of numbers near the integer `a`: itself and its neighbours, with fractions that a
/// double loses, with exponents, and the doubles nearest to it.
fn near_integer(a: i128, rng: &mut Rng) -> Vec<String> {
    let mut out = Vec::new();
    for n in [a - 1, a, a + 1] {
        out.push(n.to_string());
        out.push(format!("{n}.0"));
        out.push(format!("{n}.5"));
        out.push(format!("{n}.0000000000000001"));
        out.push(format!("{n}.9999999999999999"));
        let len = 1 + rng.below(20) as usize;
        out.push(format!("{n}.{}", rng.digits(len)));
        out.push(format!("{n}e0"));
        if n != 0 {
            out.push(format!("{n}0e-1"));
        }
        // Its digits with the point moved and an exponent that moves it back: integral.
        let digits = n.unsigned_abs().to_string();
        if digits.len() > 1 {
            let sign = if n < 0 { "-" } else { "" };
            let (head, tail) = digits.split_at(1);
            out.push(format!("{sign}{head}.{tail}e{}", tail.len()));
            out.push(format!("{sign}{head}.{tail}1e{}", tail.len()));
        }
    }
    // The doubles nearest to `a`, written as Rust writes them (the shortest that reads back).
    let f = a as f64;
    for x in [f.next_down(), f, f.next_up()] {
        out.push(format!("{x:?}"));
        out.push(format!("{x:e}"));
        // Halfway to the next double away from zero: an exact decimal, a tie to round.
        let m = x.abs();
        let half = (m.next_up() - m) / 2.0;
        if half.is_finite() && half > 0.0 {
            let sign = if x < 0.0 { "-" } else { "" };
            out.push(format!("{sign}{}", exact_decimal_sum(m, half)));
        }
    }
    out
}

/// `x + h` as an exact decimal (both are doubles, so their sum has a finite decimal expansion):
/// printed with enough digits that nothing is rounded.
fn exact_decimal_sum(x: f64, h: f64) -> String {
    // Doubles are sums of powers of two; 1100 fraction digits hold any of their sums exactly.
    let sum = num_exact::Exact::of(x).add(&num_exact::Exact::of(h));
    sum.to_string()
}

/// Exact decimal arithmetic on doubles, enough for a sum and its text.
mod num_exact {
    /// A number as a decimal integer scaled by 10^-SCALE, its digits little-endian in base 1e9.
    pub struct Exact {
        negative: bool,
        limbs: Vec<u64>,
    }

    const SCALE: u32 = 1100;
    const BASE: u64 = 1_000_000_000;

    impl Exact {
        /// The exact value of a finite double.
        pub fn of(x: f64) -> Exact {
            let bits = x.to_bits();
            let negative = bits >> 63 == 1;
            let exponent = ((bits >> 52) & 0x7ff) as i32;
            let fraction = bits & ((1 << 52) - 1);
            let (mantissa, power) = if exponent == 0 {
                (fraction, -1074)
            } else {
                (fraction | (1 << 52), exponent - 1075)
            };
            // mantissa * 2^power * 10^SCALE, an integer since power >= -1074 and SCALE >= 1074.
            let mut limbs = vec![mantissa % BASE, mantissa / BASE];
            for _ in 0..SCALE {
                mul_small(&mut limbs, 10);
            }
            if power >= 0 {
                for _ in 0..power {
                    mul_small(&mut limbs, 2);
                }
            } else {
                for _ in 0..(-power) {
                    div_small(&mut limbs, 2);
                }
            }
            trim(&mut limbs);
            Exact { negative, limbs }
        }

        /// The sum of two numbers of the same sign.
        pub fn add(&self, other: &Exact) -> Exact {
            assert_eq!(self.negative, other.negative, "same signs only");
            let mut limbs = vec![0; self.limbs.len().max(other.limbs.len()) + 1];
            let mut carry = 0;
            for (i, l) in limbs.iter_mut().enumerate() {
                let s = self.limbs.get(i).unwrap_or(&0) + other.limbs.get(i).unwrap_or(&0) + carry;
                *l = s % BASE;
                carry = s / BASE;
            }
            trim(&mut limbs);
            Exact {
                negative: self.negative,
                limbs,
            }
        }
    }

    impl std::fmt::Display for Exact {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            let mut digits = String::new();
            for (i, l) in self.limbs.iter().rev().enumerate() {
                if i == 0 {
                    digits.push_str(&l.to_string());
                } else {
                    digits.push_str(&format!("{l:09}"));
                }
            }
            let digits = format!("{digits:0>width$}", width = SCALE as usize + 1);
            let (int, frac) = digits.split_at(digits.len() - SCALE as usize);
            let frac = frac.trim_end_matches('0');
            let sign = if self.negative { "-" } else { "" };
            if frac.is_empty() {
                write!(f, "{sign}{int}")
            } else {
                write!(f, "{sign}{int}.{frac}")
            }
        }
    }

    fn mul_small(limbs: &mut Vec<u64>, m: u64) {
        let mut carry = 0;
        for l in limbs.iter_mut() {
            let v = *l * m + carry;
            *l = v % BASE;
            carry = v / BASE;
        }
        while carry > 0 {
            limbs.push(carry % BASE);
            carry /= BASE;
        }
    }

    fn div_small(limbs: &mut [u64], d: u64) {
        let mut rest = 0;
        for l in limbs.iter_mut().rev() {
            let v = rest * BASE + *l;
            *l = v / d;
            rest = v % d;
        }
        assert_eq!(rest, 0, "an exact division");
    }

    fn trim(limbs: &mut Vec<u64>) {
        while limbs.len() > 1 && limbs.last() == Some(&0) {
            limbs.pop();
        }
    }
}

/// Spellings of numbers near the double `x`: itself, its neighbours, more digits than it holds,
/// and the exact halfway points to its neighbours (ties) and just past them.
fn near_double(x: f64, rng: &mut Rng) -> Vec<String> {
    let mut out = Vec::new();
    for y in [x.next_down(), x, x.next_up()] {
        if !y.is_finite() {
            continue;
        }
        out.push(format!("{y:?}"));
        out.push(format!("{y:e}"));
        // 17 to 25 significant digits: past what serde_json's fast reading gets right.
        let precision = 16 + rng.below(9) as usize;
        out.push(format!("{y:.precision$e}"));
        let mut long = format!("{y:.24e}");
        let at = long.find('e').unwrap() - 1 - rng.below(6) as usize;
        let digit = char::from(b'0' + rng.below(10) as u8);
        long.replace_range(at..at + 1, &digit.to_string());
        out.push(long);
    }
    if x.is_finite() && x.next_up().is_finite() && x >= 0.0 {
        let half = (x.next_up() - x) / 2.0;
        if half > 0.0 {
            let tie = exact_decimal_sum(x, half);
            out.push(format!("{tie}1"));
            out.push(tie.clone());
            // Just below the tie: the last digit one less (the tie ends in 5).
            let mut below = tie;
            if below.ends_with('5') {
                below.pop();
                below.push_str("49999");
                out.push(below);
            }
        }
    }
    // An integral double written out whole, and the integers either side of it (beyond 2^127
    // no `i128` holds them: they are compared with the bounds digit by digit).
    if x.is_finite() && x.fract() == 0.0 {
        let whole = format!("{:.0}", x.abs());
        let last = whole.as_bytes()[whole.len() - 1];
        out.push(whole.clone());
        for step in [b'1', b'9'] {
            let next = if step == b'1' {
                last.checked_add(1)
            } else {
                last.checked_sub(1)
            };
            if let Some(digit) = next.filter(u8::is_ascii_digit) {
                let mut other = whole.clone();
                other.pop();
                other.push(char::from(digit));
                out.push(other);
            }
        }
    }
    out.retain(|t| !t.contains("inf") && !t.contains("NaN"));
    out.iter()
        .flat_map(|t| {
            let negative = if let Some(rest) = t.strip_prefix('-') {
                rest.to_owned()
            } else {
                format!("-{t}")
            };
            [t.clone(), negative]
        })
        .collect()
}

fn cases(seed: u64) -> Vec<Case> {
    let mut rng = Rng(seed | 1);
    let mut out = Vec::new();
    let powers: Vec<i128> = [0u32, 1, 7, 8, 15, 16, 31, 32, 52, 53, 54, 63, 64]
        .iter()
        .flat_map(|&k| [1i128 << k, -(1i128 << k)])
        .collect();
    for (tool, kind, lo, hi) in INTEGER_TOOLS {
        let anchors = [lo, hi, 0].into_iter().chain(powers.iter().copied());
        for a in anchors {
            for text in near_integer(a, &mut rng) {
                out.push(Case {
                    tool,
                    kind,
                    arguments: format!(r#"{{"n": {text}}}"#),
                    text,
                });
            }
        }
    }
    // `page`: the offset near 0, 2^52, 2^53 - 1 and 2^53; the limit with and without null.
    for a in [0i128, 1 << 52, (1 << 53) - 1, 1 << 53] {
        for text in near_integer(a, &mut rng) {
            out.push(Case {
                tool: "page",
                kind: "safe",
                arguments: format!(r#"{{"offset": {text}}}"#),
                text,
            });
        }
    }
    for text in ["null", "1", "50", "51", "10.0", "1e1", "0", "2.5"] {
        out.push(Case {
            tool: "page",
            kind: "limit",
            arguments: format!(r#"{{"offset": 1, "limit": {text}}}"#),
            text: text.into(),
        });
    }
    out.push(Case {
        tool: "page",
        kind: "safe",
        arguments: r#"{"offset": null}"#.into(),
        text: "null".into(),
    });
    // Doubles across their range: each power of two from 2^-1074 to 2^1023 in steps, and the
    // extremes.
    let mut doubles: Vec<f64> = (-1074..=1023)
        .step_by(61)
        .map(|k: i32| 2f64.powi(k))
        .collect();
    doubles.extend([f64::MAX, f64::MIN_POSITIVE, 5e-324, 1.0, 0.1, 0.3]);
    for x in doubles {
        for text in near_double(x, &mut rng) {
            out.push(Case {
                tool: "echo_f64",
                kind: "f64",
                arguments: format!(r#"{{"x": {text}}}"#),
                text,
            });
        }
    }
    for x in [0.0, 1.0, 0.5, 5e-324] {
        for text in near_double(x, &mut rng) {
            out.push(Case {
                tool: "echo_ratio",
                kind: "ratio",
                arguments: format!(r#"{{"x": {text}}}"#),
                text,
            });
        }
    }
    out
}

/// The oracle's verdicts, one per case.
fn oracle(cases: &[Case]) -> Vec<Verdict> {
    use std::io::Write;
    let input: Vec<(&str, &str)> = cases.iter().map(|c| (c.kind, c.text.as_str())).collect();
    let mut child = python()
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/number_oracle.py"
        ))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&serde_json::to_vec(&input).unwrap())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the oracle failed");
    let verdicts: Vec<(bool, Option<String>)> = serde_json::from_slice(&out.stdout).unwrap();
    verdicts
        .into_iter()
        .map(|(ok, got)| {
            if ok {
                Some(got.unwrap_or_default())
            } else {
                None
            }
        })
        .collect()
}

/// What a tool echoed, as the oracle writes it: `page`'s offset alone (or empty for none), an
/// integer's digits, a double's bits.
fn echoed(case: &Case, echo: &str) -> String {
    match (case.tool, case.kind) {
        ("page", "safe") => {
            let offset = echo.split(' ').next().unwrap_or_default();
            if offset == "none" {
                String::new()
            } else {
                offset.to_owned()
            }
        }
        ("page", _) => echo.split(' ').nth(1).unwrap_or_default().to_owned(),
        _ => echo.to_owned(),
    }
}

/// Whether `got` (what the tool echoed, or `None` when refused) is the oracle's `want`. Doubles
/// compare by value (`-0` and `0` are one number to JSON Schema).
fn agrees(case: &Case, want: &Verdict, got: &Option<String>) -> bool {
    match (want, got) {
        (None, None) => true,
        (Some(w), Some(g)) if case.kind == "f64" || case.kind == "ratio" => {
            let value = |s: &str| s.parse::<u64>().ok().map(f64::from_bits);
            value(w).is_some() && value(w) == value(&echoed(case, g))
        }
        (Some(w), Some(g)) if case.tool == "page" && case.kind == "limit" => {
            // A null limit, if it were accepted, would be its default.
            *w == echoed(case, g) || (w.is_empty() && echoed(case, g) == "10")
        }
        (Some(w), Some(g)) => *w == echoed(case, g),
        _ => false,
    }
}

/// A tool's answer over MCP: what it echoed, or `None` for an error result or a JSON-RPC error.
fn mcp_answer(answer: &Value) -> Option<String> {
    let result = answer.get("result")?;
    if result["isError"] == true {
        return None;
    }
    let text = result["content"][0]["text"].as_str()?;
    Some(unwrap_text(text))
}

/// A probe tool's string as a result carries it: as is, as a JSON string, or (a scalar output
/// over MCP) in `{"result": ...}`.
fn unwrap_text(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::String(s)) => unwrap_text(&s),
        Ok(Value::Object(o)) if o["result"].is_string() => o["result"].as_str().unwrap().to_owned(),
        _ => text.to_owned(),
    }
}

/// Checks every case on one path; fails with the first disagreements.
fn check(path: &str, cases: &[Case], verdicts: &[Verdict], got: &[Option<String>]) {
    let wrong: Vec<String> = cases
        .iter()
        .zip(verdicts)
        .zip(got)
        .filter(|((c, w), g)| !agrees(c, w, g))
        .map(|((c, w), g)| format!("{} {}: oracle {w:?}, {path} {g:?}", c.tool, c.arguments))
        .collect();
    assert!(
        wrong.is_empty(),
        "{path}: {} of {} cases disagree with the oracle, first:\n{}",
        wrong.len(),
        cases.len(),
        wrong[..wrong.len().min(12)].join("\n")
    );
}

/// The stdio transport in this process, over a pipe, as a line client drives it.
struct Stdio {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    id: u64,
}

impl Stdio {
    async fn open(tools: ToolSet) -> Stdio {
        let (client, server) = tokio::io::duplex(1 << 20);
        let (input, output) = tokio::io::split(server);
        tokio::spawn(McpServer::new(tools).serve_lines(input, output));
        let (read, write) = tokio::io::split(client);
        let mut stdio = Stdio {
            write,
            read: BufReader::new(read).lines(),
            id: 0,
        };
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"numbers","version":"0"}}}"#;
        stdio.send(init).await;
        stdio
            .send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        stdio
    }

    /// Sends a line; answers the request it is, if it is one.
    async fn send(&mut self, line: &str) -> Option<Value> {
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
        if !line.contains(r#""id""#) {
            return None;
        }
        let answer = tokio::time::timeout(Duration::from_secs(10), self.read.next_line())
            .await
            .expect("an answer within 10 s")
            .unwrap()
            .expect("the transport is open");
        Some(serde_json::from_str(&answer).unwrap())
    }

    /// A call, through the transport's own lane or (with `_meta`) through rmcp's service.
    async fn call(&mut self, tool: &str, arguments: &str, through_rmcp: bool) -> Value {
        self.id += 1;
        let meta = if through_rmcp {
            format!(r#""_meta":{{"progressToken":{}}},"#, self.id)
        } else {
            String::new()
        };
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{{meta}"name":"{tool}","arguments":{arguments}}}}}"#,
            self.id
        );
        self.send(&line).await.unwrap()
    }
}

/// One stateless 2026-07-28 call, which the HTTP server answers itself.
async fn stateless(conn: &mut crate::common::Conn, tool: &str, arguments: &str) -> Value {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}},"name":"{tool}","arguments":{arguments}}}}}"#
    );
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", tool),
    ];
    conn.send("POST", "/mcp", &headers, &body).await.json()
}

/// One call in an MCP session, the arguments written into the body as they are.
async fn in_session(session: &mut Session, id: usize, tool: &str, arguments: &str) -> Value {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#,
        id + 100
    );
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    headers.extend(
        session
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str())),
    );
    let reply = session.conn.send("POST", "/mcp", &headers, &body).await;
    reply.json()
}

async fn serve_http(tools: ToolSet) -> SocketAddr {
    let bound = HttpServer::new(McpServer::new(tools))
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = bound.local_addr().unwrap();
    tokio::spawn(bound.serve());
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_path_hands_a_tool_exactly_the_number_the_schema_takes() {
    let seed = std::env::var("NUMBER_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_2026);
    let cases = cases(seed);
    let verdicts = oracle(&cases);
    let tools = examples::probe::tool_set();
    let accepted = verdicts.iter().filter(|v| v.is_some()).count();
    eprintln!(
        "{} cases (seed {seed}), {accepted} valid by the oracle",
        cases.len()
    );

    // The tool set itself, from the text.
    let cx = Context::new();
    let mut got = Vec::new();
    for c in &cases {
        let out = tools.call(&cx, c.tool, c.arguments.as_str()).await;
        got.push(
            out.ok()
                .map(|o| o.value().as_str().unwrap_or_default().to_owned()),
        );
    }
    check("ToolSet::call", &cases, &verdicts, &got);

    // The transports hand the call its arguments' text: a quarter of the cases there (every
    // `page` case among them), all of them with NUMBER_CASES=all.
    let all = std::env::var("NUMBER_CASES").is_ok_and(|v| v == "all");
    let (cases, verdicts): (Vec<Case>, Vec<Verdict>) = cases
        .into_iter()
        .zip(verdicts)
        .enumerate()
        .filter(|(i, (c, _))| all || i % 4 == 0 || c.tool == "page")
        .map(|(_, cv)| cv)
        .unzip();
    eprintln!("{} of them over MCP", cases.len());

    // stdio: the transport's lane, and rmcp's service.
    let mut stdio = Stdio::open(tools.clone()).await;
    for through_rmcp in [false, true] {
        let mut got = Vec::new();
        for c in &cases {
            got.push(mcp_answer(
                &stdio.call(c.tool, &c.arguments, through_rmcp).await,
            ));
        }
        let path = if through_rmcp {
            "stdio (rmcp)"
        } else {
            "stdio (lane)"
        };
        check(path, &cases, &verdicts, &got);
    }

    // HTTP: stateless requests (answered directly) and a session (rmcp's endpoint).
    let addr = serve_http(tools.clone()).await;
    let mut conn = crate::common::Conn::open(addr).await;
    let mut got = Vec::new();
    for c in &cases {
        got.push(mcp_answer(
            &stateless(&mut conn, c.tool, &c.arguments).await,
        ));
    }
    check("HTTP stateless", &cases, &verdicts, &got);
    let mut session = Session::open(addr, None).await.unwrap();
    let mut got = Vec::new();
    for (id, c) in cases.iter().enumerate() {
        got.push(mcp_answer(
            &in_session(&mut session, id, c.tool, &c.arguments).await,
        ));
    }
    check("HTTP session (rmcp)", &cases, &verdicts, &got);

    // A gateway's remote tools: checked against the remote's schema where the call comes in,
    // then sent on.
    let remote = Remote::http(
        "probe",
        format!("http://{addr}/mcp"),
        None,
        RemoteOptions::default(),
    )
    .await
    .unwrap();
    let gateway =
        Gateway::new(ToolSet::new(Vec::<tool_runtime::Tool>::new()).unwrap()).with_remote(remote);
    let set = gateway.tool_set().await.unwrap();
    let first = set.call(&cx, "echo_u8", r#"{"n": 1}"#).await;
    assert!(first.is_ok(), "{first:?}");
    let mut got = Vec::new();
    for c in &cases {
        let out = set.call(&cx, c.tool, c.arguments.as_str()).await;
        got.push(out.ok().map(|o| unwrap_text(&o.value().to_string())));
    }
    check("remote", &cases, &verdicts, &got);
}

/// The official Python SDK over stdio against the `number-probe` program, every argument judged
/// by `jsonschema` against the listed `inputSchema` first (`scripts/number-differential.py`; the
/// README has the longer run).
#[tokio::test]
async fn the_python_sdk_and_jsonschema_agree_with_the_server_on_every_number() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scripts/number-differential.py"
    );
    let out = tokio::process::Command::from(python())
        .args([script, "--random", "600", "--seed", "7"])
        .args(["--server", env!("CARGO_BIN_EXE_number-probe")])
        .output()
        .await
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(" 0 disagree"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
