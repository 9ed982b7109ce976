//! Golden tests of tool-result compression: threshold edges, CRLF, a giant single line,
//! multibyte characters at every cut point, empty output.

use smarter_compact::compress::{
    compress, header, lines, BODY_BUDGET_BYTES, HEAD_LINES, LINE_CAP_BYTES, TAIL_LINES,
};
use smarter_compact::fingerprint::content_id;
use smarter_compact::tokens::estimate_text;

fn numbered(n: usize, eol: &str) -> String {
    (1..=n)
        .map(|i| format!("line {i} of the output{eol}"))
        .collect()
}

#[test]
fn threshold_is_exclusive() {
    let text = numbered(200, "\n");
    let t = estimate_text(&text);
    assert!(compress(&text, t).is_none(), "at the threshold: unchanged");
    assert!(
        compress(&text, t - 1).is_some(),
        "one token over: compressed"
    );
}

#[test]
fn golden_hundred_lines() {
    let text = numbered(100, "\n");
    let c = compress(&text, 10).expect("compressed");
    let mut expected = header(100, estimate_text(&text), &content_id(&text));
    for i in 1..=HEAD_LINES {
        expected.push_str(&format!("\nline {i} of the output"));
    }
    expected.push_str("\n… 40 lines omitted (41–80) …");
    for i in 81..=100 {
        expected.push_str(&format!("\nline {i} of the output"));
    }
    assert_eq!(c.text, expected);
    assert_eq!(c.lines, 100);
    assert_eq!(c.blob_id, content_id(&text));
    assert!(c
        .text
        .starts_with("[smarter-compact] output compressed: 100 lines, ≈"));
    assert!(c
        .text
        .contains(&format!("smart_compact_get(id=\"{}\")", c.blob_id)));
}

#[test]
fn crlf_lines_are_counted_once_and_kept_clean() {
    let text = numbered(100, "\r\n");
    let c = compress(&text, 10).expect("compressed");
    assert_eq!(c.lines, 100);
    assert!(
        !c.text.contains('\r'),
        "no stray carriage returns in the sent text"
    );
    assert!(c
        .text
        .contains("\nline 40 of the output\n… 40 lines omitted (41–80) …\nline 81"));
    assert_eq!(lines(&text).len(), 100);
}

#[test]
fn five_megabyte_single_line_becomes_small() {
    let text = "{\"k\":\"v\"},".repeat(500_000);
    assert!(text.len() >= 5_000_000);
    let c = compress(&text, 4_000).expect("compressed");
    assert_eq!(c.lines, 1);
    assert!(c.text.len() < 1_000, "sent text is {} bytes", c.text.len());
    assert!(c.text.contains(&format!(
        "line cut: {} more bytes",
        text.len() - LINE_CAP_BYTES
    )));
}

#[test]
fn multibyte_characters_at_every_cut_point() {
    for ch in ['é', '€', '𝄞', '漢'] {
        for offset in 0..4 {
            let line = format!(
                "{}{}",
                "a".repeat(offset),
                ch.to_string().repeat(LINE_CAP_BYTES)
            );
            let text = format!("{}\n", line).repeat(120);
            let c = compress(&text, 10).expect("compressed");
            let first = c.text.lines().nth(1).expect("first kept line");
            let kept = first.split("… [line cut").next().expect("prefix");
            assert!(
                line.starts_with(kept),
                "{ch:?} +{offset}: kept part is not a prefix"
            );
            assert!(kept.len() <= LINE_CAP_BYTES && kept.len() + 4 > LINE_CAP_BYTES);
        }
    }
}

#[test]
fn long_lines_respect_the_byte_budget() {
    let text = (0..500)
        .map(|i| format!("{i}:{}\n", "x".repeat(300)))
        .collect::<String>();
    let c = compress(&text, 10).expect("compressed");
    let body: usize = c.text.lines().skip(1).map(|l| l.len() + 1).sum();
    assert!(
        body < BODY_BUDGET_BYTES + 2 * LINE_CAP_BYTES,
        "body {body} bytes"
    );
    assert!(c.text.lines().count() < HEAD_LINES + TAIL_LINES + 2);
    assert!(c.text.contains("lines omitted"));
}

#[test]
fn empty_and_small_outputs_are_left_alone() {
    assert!(compress("", 0).is_none());
    assert!(compress("ok\n", 4_000).is_none());
}

#[test]
fn same_output_same_id() {
    let a = numbered(300, "\n");
    let b = numbered(301, "\n");
    assert_eq!(
        compress(&a, 10).unwrap().blob_id,
        compress(&a, 10).unwrap().blob_id
    );
    assert_ne!(
        compress(&a, 10).unwrap().blob_id,
        compress(&b, 10).unwrap().blob_id
    );
}
