//! JSON text read the way the boundary reads it.

/// Whether JSON text gives some object key twice, at any depth, comparing member names after
/// their escapes are read (`"a"` and `"\u0061"` are the same key) — or is not JSON at all: which
/// value was meant cannot be known. A transport refuses such a client answer before reading it.
pub fn has_duplicate_keys(text: &[u8]) -> bool {
    crate::validate::has_duplicate_keys(text)
}
