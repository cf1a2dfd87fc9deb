//! The words the model reads from the toolkit itself: the repair message for invalid arguments,
//! the boundary sentence after a description, the messages of failed, refused and held calls, and
//! the repair message for a structured-output reply. English by default; a team gives its agent
//! its own wording, such as [`Wording::indonesian`], with [`ToolSet::with_wording`].
//!
//! ```
//! use tool_runtime::{tool, Context, ToolSet, Wording};
//!
//! #[tool(description = "Count the catering portions.", not_for = "cancelling an order")]
//! fn portions(#[arg(description = "Number of guests", range = 1..=500)] guests: u32) -> u32 {
//!     guests + 5
//! }
//!
//! let tools = ToolSet::new([portions::tool()]).unwrap().with_wording(Wording::indonesian());
//! assert_eq!(tools.description(portions::tool()), "Count the catering portions. Bukan untuk: cancelling an order.");
//! let err = tools.call(&Context::new(), "portions", r#"{"guests": 0}"#).blocking().unwrap_err();
//! assert!(tools.model_message(&err).starts_with("Argumen tidak valid:"));
//! ```
//!
//! Templates name their blanks in braces (`{tool}`, `{n}`, `{message}`, ...); each field's
//! documentation lists its blanks. The line for each violation is [`Violation`]'s own text
//! (field, expectation, value received) unless [`Wording::violation`] renders it.
//!
//! [`ToolSet::with_wording`]: crate::ToolSet::with_wording

use std::borrow::Cow;

use crate::error::ToolError;
use crate::validate::{Violation, Violations};

/// How many violations a repair message lists; the structured list keeps all of them.
pub(crate) const MAX_IN_MESSAGE: usize = 20;

/// The toolkit's own model-facing messages: English by default ([`Wording::english`]), or a
/// team's own, given to a tool set with [`ToolSet::with_wording`](crate::ToolSet::with_wording).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Wording {
    /// Opens the repair message for invalid arguments.
    pub invalid_arguments: Cow<'static, str>,
    /// Ends it.
    pub fix_and_retry: Cow<'static, str>,
    /// The line for violations past the first 20. Blank: `{n}`.
    pub and_more: Cow<'static, str>,
    /// How one violation is written in the repair message; `None` for [`Violation`]'s own text.
    pub violation: Option<fn(&Violation) -> String>,
    /// The boundary sentence after a description. Blank: `{not_for}` (without its final period).
    pub not_for: Cow<'static, str>,
    /// The tool returned an error. Blank: `{message}` (the error's text).
    pub failed: Cow<'static, str>,
    /// The tool panicked and shows its message to the model. Blank: `{message}`.
    pub panicked: Cow<'static, str>,
    /// A panic, a broken schema or missing host state: nothing the model can fix.
    pub internal_error: Cow<'static, str>,
    /// The model asked for a tool that does not exist. Blank: `{tool}`.
    pub unknown_tool: Cow<'static, str>,
    /// Added when a close name exists. Blank: `{suggestion}`.
    pub did_you_mean: Cow<'static, str>,
    /// The caller may not use the tool. Blank: `{tool}`.
    pub forbidden: Cow<'static, str>,
    /// The call waits for a person's approval; nothing ran yet.
    pub approval_waiting: Cow<'static, str>,
    /// The person declined; nothing ran.
    pub approval_declined: Cow<'static, str>,
    /// Approval was needed and could not be asked for (the client cannot ask its user); the held
    /// call was dropped and nothing ran.
    pub approval_unavailable: Cow<'static, str>,
    /// Asking for approval failed. Blank: `{reason}`.
    pub approval_failed: Cow<'static, str>,
    /// The call waits for another person's approval (one holding a grant the caller lacks);
    /// nothing ran yet. Blank: `{grant}`.
    pub approval_by_other: Cow<'static, str>,
    /// The call needs another person's approval and the caller cannot follow a task, the only
    /// way such a call can wait; nothing ran. Blank: `{grant}`.
    pub approval_by_other_unavailable: Cow<'static, str>,
    /// A result longer than its tool's bound (`max_result_chars`) was cut; follows the part
    /// shown. Blanks: `{shown}`, `{total}` (characters).
    pub result_cut: Cow<'static, str>,
    /// Where the whole of a cut result is kept (an MCP resource); follows
    /// [`result_cut`](Wording::result_cut). Blank: `{uri}`.
    pub result_kept: Cow<'static, str>,
    /// A resumed call was not waiting (already decided, expired, or never held): it did not run.
    pub not_pending: Cow<'static, str>,
    /// The tool did not finish in time; it was stopped. Blank: `{seconds}`.
    pub timed_out: Cow<'static, str>,
    /// The server is at its limit of calls; nothing ran.
    pub busy: Cow<'static, str>,
    /// The run's budget of tool calls is spent ([`Budget`](crate::agent::Budget)); nothing
    /// ran, and the run stops before its next request.
    pub budget_spent: Cow<'static, str>,
    /// A structured-output reply that is not JSON. Blank: `{error}`.
    pub reply_not_json: Cow<'static, str>,
    /// A structured-output reply that breaks the schema or the rules: opens the list.
    pub reply_invalid: Cow<'static, str>,
    /// Ends that list.
    pub reply_fix: Cow<'static, str>,
}

impl Default for Wording {
    fn default() -> Self {
        Wording::english()
    }
}

impl Wording {
    /// The toolkit's wording: English.
    pub fn english() -> Wording {
        Wording {
            invalid_arguments: "The arguments were not valid:".into(),
            fix_and_retry: "Fix every item above and call the tool again with the complete arguments."
                .into(),
            and_more: "and {n} more like these".into(),
            violation: None,
            not_for: "Not for: {not_for}.".into(),
            failed: "The tool failed: {message}".into(),
            panicked: "The tool failed unexpectedly: {message}".into(),
            internal_error:
                "The tool failed because of an internal error. Do not retry with the same arguments."
                    .into(),
            unknown_tool: "There is no tool named `{tool}`.".into(),
            did_you_mean: " Did you mean `{suggestion}`?".into(),
            forbidden: "The tool `{tool}` is not available to this user. Do not try it again."
                .into(),
            approval_waiting: "This action needs a person's approval. It has not run yet; tell the user it is waiting for approval."
                .into(),
            approval_declined: "The user did not approve this action; nothing was changed.".into(),
            approval_unavailable: "This action needs a person's approval, and this application cannot ask for it, so it was not carried out and nothing was changed. Tell the user it was not done, and that they can do it in an application that asks them to approve it."
                .into(),
            approval_failed: "This action needs a person's approval, which could not be asked for ({reason}); nothing was changed."
                .into(),
            approval_by_other: "This action waits for approval by someone else (who holds `{grant}`). It has not run yet; tell the user it is waiting for that approval."
                .into(),
            approval_by_other_unavailable: "This action needs approval by someone else (who holds `{grant}`), and this application cannot follow a call that waits for it, so it was not carried out and nothing was changed. Tell the user it was not done."
                .into(),
            result_cut: "\n[Cut: the result has {total} characters and only the first {shown} are shown above. Ask for less (narrower arguments) to see the rest.]"
                .into(),
            result_kept: " [The whole result is kept for the user as the resource {uri}.]".into(),
            not_pending: "This action was not run: it is no longer waiting for approval (it was decided already, or it expired)."
                .into(),
            timed_out: "The tool did not finish within {seconds} seconds and was stopped. Tell the user; retry only if they ask."
                .into(),
            busy: "The tool service is busy and did not run this call. Try again shortly.".into(),
            budget_spent: "Not run: this run's budget of tool calls is spent. The run stops here; it may go on later with a larger budget."
                .into(),
            reply_not_json: "The previous answer was not valid JSON ({error}).\nReturn only the complete JSON object."
                .into(),
            reply_invalid: "The previous JSON was not valid:".into(),
            reply_fix: "Fix it from the same input and return the complete JSON.".into(),
        }
    }

    /// Indonesian, for agents whose users write Indonesian.
    pub fn indonesian() -> Wording {
        Wording {
            invalid_arguments: "Argumen tidak valid:".into(),
            fix_and_retry: "Perbaiki setiap butir di atas lalu panggil tool ini lagi dengan argumen lengkap."
                .into(),
            and_more: "dan {n} lagi yang serupa".into(),
            violation: None,
            not_for: "Bukan untuk: {not_for}.".into(),
            failed: "Tool gagal: {message}".into(),
            panicked: "Tool gagal secara tak terduga: {message}".into(),
            internal_error: "Tool gagal karena kesalahan internal. Jangan ulangi dengan argumen yang sama."
                .into(),
            unknown_tool: "Tidak ada tool bernama `{tool}`.".into(),
            did_you_mean: " Mungkin maksudnya `{suggestion}`?".into(),
            forbidden: "Tool `{tool}` tidak tersedia untuk pengguna ini. Jangan coba lagi.".into(),
            approval_waiting: "Tindakan ini perlu persetujuan seseorang. Belum dijalankan; beri tahu pengguna bahwa tindakan ini menunggu persetujuan."
                .into(),
            approval_declined: "Pengguna tidak menyetujui tindakan ini; tidak ada yang diubah."
                .into(),
            approval_unavailable: "Tindakan ini perlu persetujuan seseorang, dan aplikasi ini tidak bisa memintanya, jadi tindakan tidak dijalankan dan tidak ada yang diubah. Beri tahu pengguna bahwa tindakan belum dilakukan, dan bisa dilakukan lewat aplikasi yang meminta persetujuannya."
                .into(),
            approval_failed: "Tindakan ini perlu persetujuan seseorang, yang tidak bisa diminta ({reason}); tidak ada yang diubah."
                .into(),
            approval_by_other: "Tindakan ini menunggu persetujuan orang lain (pemegang `{grant}`). Belum dijalankan; beri tahu pengguna bahwa tindakan ini menunggu persetujuan tersebut."
                .into(),
            approval_by_other_unavailable: "Tindakan ini perlu disetujui orang lain (pemegang `{grant}`), dan aplikasi ini tidak bisa mengikuti panggilan yang menunggu persetujuan itu, jadi tindakan tidak dijalankan dan tidak ada yang diubah. Beri tahu pengguna bahwa tindakan belum dilakukan."
                .into(),
            result_cut: "\n[Dipotong: hasil ini {total} karakter dan hanya {shown} karakter pertama yang ditampilkan di atas. Minta lebih sedikit (argumen yang lebih sempit) untuk melihat sisanya.]"
                .into(),
            result_kept: " [Hasil lengkapnya disimpan untuk pengguna sebagai resource {uri}.]".into(),
            not_pending: "Tindakan ini tidak dijalankan: tidak lagi menunggu persetujuan (sudah diputuskan, atau kedaluwarsa)."
                .into(),
            timed_out: "Tool tidak selesai dalam {seconds} detik dan dihentikan. Beri tahu pengguna; ulangi hanya bila ia meminta."
                .into(),
            busy: "Layanan tool sedang sibuk dan tidak menjalankan panggilan ini. Coba lagi sebentar lagi."
                .into(),
            budget_spent: "Tidak dijalankan: jatah panggilan tool untuk proses ini sudah habis. Proses berhenti di sini; dapat dilanjutkan nanti dengan jatah yang lebih besar."
                .into(),
            reply_not_json: "Jawaban sebelumnya bukan JSON yang valid ({error}).\nKembalikan hanya objek JSON yang lengkap."
                .into(),
            reply_invalid: "JSON sebelumnya tidak valid:".into(),
            reply_fix: "Perbaiki dari masukan yang sama dan kembalikan JSON yang lengkap.".into(),
        }
    }

    /// The description the model reads: a tool's `description`, then the boundary sentence
    /// made from its `not_for`.
    pub fn describe(&self, description: &str, not_for: Option<&str>) -> String {
        let d = description.trim_end();
        match not_for {
            Some(n) => {
                let sentence = fill(&self.not_for, &[("not_for", n.trim_end_matches('.'))]);
                format!("{d} {sentence}")
            }
            None => d.to_owned(),
        }
    }

    /// The repair message for invalid arguments: every violation (the first 20), then what to do.
    pub fn repair_message(&self, violations: &Violations) -> String {
        let mut s = format!("{}\n", self.invalid_arguments);
        for v in violations.iter().take(MAX_IN_MESSAGE) {
            let line = match self.violation {
                Some(render) => render(v),
                None => v.to_string(),
            };
            s.push_str(&format!("- {line}\n"));
        }
        if violations.len() > MAX_IN_MESSAGE {
            let n = (violations.len() - MAX_IN_MESSAGE).to_string();
            s.push_str(&format!("- {}\n", fill(&self.and_more, &[("n", &n)])));
        }
        s.push_str(&self.fix_and_retry);
        s
    }

    /// What the model is told about a call that did not produce a value.
    pub fn error_message(&self, error: &ToolError) -> String {
        match error {
            ToolError::InvalidArguments(v) => self.repair_message(v),
            ToolError::Failed { message, .. } => fill(&self.failed, &[("message", message)]),
            ToolError::Panicked {
                message,
                to_model: true,
            } => fill(&self.panicked, &[("message", message)]),
            ToolError::Panicked { .. }
            | ToolError::Schema(_)
            | ToolError::MissingContext { .. } => self.internal_error.to_string(),
            ToolError::UnknownTool { name, did_you_mean } => {
                let mut s = fill(&self.unknown_tool, &[("tool", name)]);
                if let Some(d) = did_you_mean {
                    s.push_str(&fill(&self.did_you_mean, &[("suggestion", d)]));
                }
                s
            }
            ToolError::Forbidden { tool, .. } => fill(&self.forbidden, &[("tool", tool)]),
            ToolError::ApprovalRequired(_) => self.approval_waiting.to_string(),
            ToolError::NotPending { .. } => self.not_pending.to_string(),
            ToolError::ApprovalStore(e) => self.approval_failed_message(e.message()),
            ToolError::TimedOut { seconds } => {
                fill(&self.timed_out, &[("seconds", &format_seconds(*seconds))])
            }
            ToolError::Busy => self.busy.to_string(),
        }
    }
}

impl Wording {
    /// `text` cut to its first `max_chars` characters with [`result_cut`](Wording::result_cut)
    /// after them, or `None` when it is within the bound.
    pub fn cut_result(&self, text: &str, max_chars: usize) -> Option<String> {
        let (end, _) = text.char_indices().nth(max_chars)?;
        let total = text.chars().count().to_string();
        let mut cut = text[..end].to_owned();
        cut.push_str(&fill(
            &self.result_cut,
            &[("shown", &max_chars.to_string()), ("total", &total)],
        ));
        Some(cut)
    }

    /// [`result_kept`](Wording::result_kept) naming the resource's `uri`.
    pub fn result_kept_message(&self, uri: &str) -> String {
        fill(&self.result_kept, &[("uri", uri)])
    }

    /// [`approval_failed`](Wording::approval_failed) with its reason filled in.
    pub fn approval_failed_message(&self, reason: &str) -> String {
        fill(&self.approval_failed, &[("reason", reason)])
    }

    /// [`approval_by_other`](Wording::approval_by_other) naming the approvers' `grant`.
    pub fn approval_by_other_message(&self, grant: &str) -> String {
        fill(&self.approval_by_other, &[("grant", grant)])
    }

    /// [`approval_by_other_unavailable`](Wording::approval_by_other_unavailable) naming the
    /// approvers' `grant`.
    pub fn approval_by_other_unavailable_message(&self, grant: &str) -> String {
        fill(&self.approval_by_other_unavailable, &[("grant", grant)])
    }
}

impl ToolError {
    /// The text to send back to the model as the tool result, in English; a tool set with its
    /// own [`Wording`] words it with [`ToolSet::model_message`](crate::ToolSet::model_message).
    pub fn model_message(&self) -> String {
        Wording::english().error_message(self)
    }
}

impl Violations {
    /// The repair message for the model, in English: every violation, then what to do. A tool
    /// set with its own [`Wording`] words it with [`Wording::repair_message`].
    pub fn repair_message(&self) -> String {
        Wording::english().repair_message(self)
    }
}

/// The repair message, in English.
impl std::fmt::Display for Violations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.repair_message())
    }
}

fn format_seconds(s: f64) -> String {
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        format!("{s:.1}")
    }
}

/// `template` with each `{name}` replaced by its value.
pub(crate) fn fill(template: &str, blanks: &[(&str, &str)]) -> String {
    let mut out = template.to_owned();
    for (name, value) in blanks {
        out = out.replace(&format!("{{{name}}}"), value);
    }
    out
}
