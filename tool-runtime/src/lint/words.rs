//! The words each lint looks for, one pack per language: the rules are in the lints, the words
//! here. A language is one more file in `words/` and one more entry in [`PACKS`].

mod english;
mod indonesian;

/// The words of one language the lints look for.
pub(crate) struct Words {
    /// Words too common to tell two tools apart.
    pub(crate) stopwords: &'static [&'static str],
    /// Phrases that say what a tool does or returns; matched at the start of words, so `return` covers "returns" and "returned" (verbs are listed with their prefixes where the language has them).
    pub(crate) returns: &'static [&'static str],
    /// Phrases that say when to use a tool.
    pub(crate) when: &'static [&'static str],
    /// Phrases that say what to do when an optional argument is not given, or what null means.
    pub(crate) not_given: &'static [&'static str],
    /// Phrases that introduce examples of an open set.
    pub(crate) examples: &'static [&'static str],
    /// The word that joins the last of a list of choices.
    pub(crate) or: &'static [&'static str],
    /// Names of fields that hold the model's reasoning.
    pub(crate) reason_names: &'static [&'static str],
    /// Words in a string field's description that make it a reasoning field.
    pub(crate) reason_words: &'static [&'static str],
}

/// Every pack the lints read.
pub(crate) const PACKS: &[&Words] = &[&indonesian::WORDS, &english::WORDS];

/// The words of every pack for one list: `all(|w| w.returns)`.
pub(crate) fn all(
    list: fn(&Words) -> &'static [&'static str],
) -> impl Iterator<Item = &'static str> {
    PACKS.iter().flat_map(move |w| list(w).iter().copied())
}
