//! Escaping text for HTML: the one place the five entities are written.
//! Every module that puts text into HTML, and Tera for every value a
//! template prints, goes through here. It knows nothing of Markdown or URLs
//! (see `url` for links).

/// Escape text for HTML element content and quoted attribute values.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let pushed: Result<(), std::convert::Infallible> = escaped_pieces(s, |piece| {
        out.push_str(piece);
        Ok(())
    });
    let Ok(()) = pushed;
    out
}

/// [`escape_html`] written to `out`: Tera's escape function, so that every
/// value a template prints is escaped alike (and in runs, not byte by byte).
pub fn escape_html_to(s: &str, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    escaped_pieces(s, |piece| out.write_all(piece.as_bytes()))
}

/// `s` as pieces: runs of text without `&<>"'`, and the entity of each of those.
fn escaped_pieces<E>(s: &str, mut piece: impl FnMut(&str) -> Result<(), E>) -> Result<(), E> {
    let mut last = 0;
    for (i, b) in s.bytes().enumerate() {
        let entity = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        // The five are ASCII, so `i` is a character boundary.
        piece(&s[last..i])?;
        piece(entity)?;
        last = i + 1;
    }
    piece(&s[last..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_five_are_escaped_and_the_rest_kept() {
        assert_eq!(escape_html(r#"a<b>&"c"'d' é"#), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39; é");
        let mut out = Vec::new();
        escape_html_to("<x>", &mut out).unwrap();
        assert_eq!(out, b"&lt;x&gt;");
    }
}
