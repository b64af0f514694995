//! Putting untrusted text (bench labels, file paths, server answers) into a
//! GitHub comment so that it shows as written and does nothing else: no
//! escaped code span or fence, no HTML, no link, no @mention.
//!
//! Each context has its own function, because what is harmless inside a code
//! fence (`<img>`) is live in plain text and vice versa.

/// Control characters (newline, carriage return, escape, …) made visible as
/// `\n`, `\u{1b}`: inside a code span or table cell a raw newline would end
/// the span, the cell or the fence.
fn visible_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The longest run of backticks in `text`.
fn longest_backtick_run(text: &str) -> usize {
    let (mut longest, mut run) = (0, 0);
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}

/// An inline code span showing `text` literally, for use in a table cell.
///
/// The delimiter is one backtick longer than any run inside (CommonMark
/// §6.1), with a space of padding when the text starts or ends with a
/// backtick; `|` is escaped because GitHub splits table cells before it reads
/// code spans; control characters are shown escaped.
pub fn code_span(text: &str) -> String {
    let text = visible_controls(text).replace('|', "\\|");
    let ticks = "`".repeat(longest_backtick_run(&text) + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') || text.is_empty() {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// A fence for a code block holding `content`: three backticks, or one more
/// than the longest backtick run in it, so no line inside can close it.
pub fn fence_for(content: &str) -> String {
    "`".repeat((longest_backtick_run(content) + 1).max(3))
}

/// `text` for Markdown prose: HTML and Markdown punctuation escaped, control
/// characters shown escaped, and `@` followed by a zero-width space so that a
/// name never becomes a mention.
pub fn text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in visible_controls(text).chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '@' => out.push_str("@\u{200b}"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '!' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_cannot_be_escaped() {
        assert_eq!(code_span("src/a.rs"), "`src/a.rs`");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`x"), "`` `x ``");
        assert_eq!(code_span("a|b"), "`a\\|b`");
        assert_eq!(code_span("a\nb"), "`a\\nb`");
        let hostile = "x` @alice <img src=y> ``` [l](http://e)";
        let span = code_span(hostile);
        assert!(span.starts_with("````") && span.ends_with("````"), "{span}");
    }

    #[test]
    fn fences_outrun_backticks_inside() {
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("a\n````\nb"), "`````");
    }

    #[test]
    fn prose_has_no_html_links_or_mentions() {
        let shown = text("hi @alice <img src=x> [a](b) `c`\nd");
        assert_eq!(
            shown,
            "hi @\u{200b}alice &lt;img src=x&gt; \\[a\\](b) \\`c\\`\\\\nd"
        );
    }
}
