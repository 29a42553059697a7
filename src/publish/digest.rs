//! Digests of what a page or a loaded file was made from, so that
//! `--watch` can tell what a change left as it was: a baseline file whose
//! text is the same is not parsed again, an archive not unpacked again, a
//! page whose inputs are the same not rendered again.
//!
//! A digest is 64 bits of SipHash with fixed keys: stable within a process,
//! which is all a rebuild needs. It is not a security measure; the inputs
//! are the user's own files.

use std::hash::{DefaultHasher, Hasher};

use serde::Serialize;

/// The digest of some bytes.
pub fn of_bytes(bytes: &[u8]) -> u64 {
    let mut d = Digest::default();
    d.bytes(bytes);
    d.finish()
}

/// A digest being computed from several parts.
#[derive(Default)]
pub struct Digest(DefaultHasher);

impl Digest {
    pub fn bytes(&mut self, bytes: &[u8]) {
        // The length first, so that parts cannot run into each other.
        self.0.write_u64(bytes.len() as u64);
        self.0.write(bytes);
    }

    /// Bytes of one part given in pieces: the digest does not depend on
    /// where the pieces were cut (SipHash reads a stream).
    pub fn stream(&mut self, piece: &[u8]) {
        self.0.write(piece);
    }

    pub fn text(&mut self, text: &str) {
        self.bytes(text.as_bytes());
    }

    pub fn number(&mut self, n: u64) {
        self.0.write_u64(n);
    }

    /// A value as its JSON text (streamed into the digest, never built).
    pub fn value<T: Serialize + ?Sized>(&mut self, value: &T) {
        let mut writer = Writer(&mut self.0);
        // Writing to a hasher cannot fail; a value that cannot be
        // serialized still gets a digest (of what was written).
        let _ = serde_json::to_writer(&mut writer, value);
        self.0.write_u8(0xff);
    }

    pub fn finish(&self) -> u64 {
        self.0.finish()
    }
}

struct Writer<'a>(&'a mut DefaultHasher);

impl std::io::Write for Writer<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_do_not_run_into_each_other_and_values_differ_by_content() {
        let two = |a: &str, b: &str| {
            let mut d = Digest::default();
            d.text(a);
            d.text(b);
            d.finish()
        };
        assert_ne!(two("ab", "c"), two("a", "bc"));
        let streamed = |pieces: &[&[u8]]| {
            let mut d = Digest::default();
            pieces.iter().for_each(|p| d.stream(p));
            d.finish()
        };
        assert_eq!(streamed(&[b"abc", b"def"]), streamed(&[b"a", b"bcdef"]));
        assert_eq!(of_bytes(b"same"), of_bytes(b"same"));
        let value = |v: serde_json::Value| {
            let mut d = Digest::default();
            d.value(&v);
            d.finish()
        };
        assert_eq!(value(serde_json::json!({"a": [1, 2]})), value(serde_json::json!({"a": [1, 2]})));
        assert_ne!(value(serde_json::json!({"a": [1, 2]})), value(serde_json::json!({"a": [1, 3]})));
    }
}
