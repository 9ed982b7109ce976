//! Golden tests of tool-result compression: threshold edges, CRLF, a giant single line,
//! multibyte characters at every cut point, empty output.

use smarter_compact::compress::{
    compress, header, lines, LeftOut, BODY_BUDGET_BYTES, HEAD_LINES, LINE_CAP_BYTES, TAIL_LINES,
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
    let shown: String = (1..=HEAD_LINES)
        .chain(81..=100)
        .map(|i| format!("line {i} of the output\n"))
        .collect();
    let left = LeftOut {
        lines: 40,
        bytes: (41..=80)
            .map(|i| format!("line {i} of the output").len())
            .sum(),
        tokens: estimate_text(&text) - estimate_text(&shown),
    };
    let mut expected = header(100, estimate_text(&text), &content_id(&text), left);
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

/// A 10,000-line test log with three failures in its middle.
fn test_log() -> (String, [usize; 3]) {
    let fails = [2_345, 5_000, 7_777];
    let text = (1..=10_000)
        .map(|i| match i {
            2_345 => "FAILED tests/test_auth.py::test_login - AssertionError: 401 != 200\n".into(),
            5_000 => "thread 'store::tests::reopen' panicked at src/store.rs:88:9:\n".into(),
            7_777 => "error[E0308]: mismatched types in src/lib.rs:12\n".into(),
            _ => format!("test case {i} ... ok\n"),
        })
        .collect::<String>();
    (text, fails)
}

#[test]
fn golden_failures_in_the_middle_survive_with_their_numbers() {
    let (text, fails) = test_log();
    let c = compress(&text, 4_000).expect("compressed");
    let mut body = c.text.lines();
    let head = body.next().expect("header");
    assert!(
        head.starts_with("[smarter-compact] output compressed: 10000 lines, ≈"),
        "header first: {head}"
    );
    for (n, want) in fails.iter().zip([
        "FAILED tests/test_auth.py::test_login - AssertionError: 401 != 200",
        "thread 'store::tests::reopen' panicked at src/store.rs:88:9:",
        "error[E0308]: mismatched types in src/lib.rs:12",
    ]) {
        assert!(
            c.text.contains(&format!("\n[line {n}] {want}\n")),
            "line {n} kept with its number"
        );
    }
    assert!(c
        .text
        .contains("omitted except the 3 that look like failures"));
    let body_bytes: usize = c.text.lines().skip(1).map(|l| l.len() + 1).sum();
    assert!(
        body_bytes <= BODY_BUDGET_BYTES + 400,
        "body {body_bytes} bytes"
    );
    assert!(c.text.contains("test case 1 ... ok\n"), "head kept");
    assert!(c.text.ends_with("test case 10000 ... ok"), "tail kept");
}

#[test]
fn the_header_accounts_for_exactly_what_is_left_out() {
    let (text, _) = test_log();
    let c = compress(&text, 4_000).expect("compressed");
    let all = lines(&text);
    let shown: Vec<&str> = c
        .text
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with('…'))
        .map(|l| {
            l.split_once("] ")
                .filter(|_| l.starts_with("[line "))
                .map_or(l, |(_, r)| r)
        })
        .collect();
    let left_lines = all.len() - shown.len();
    let left_bytes: usize =
        all.iter().map(|l| l.len()).sum::<usize>() - shown.iter().map(|l| l.len()).sum::<usize>();
    assert!(
        c.text.lines().next().unwrap().contains(&format!(
            "left out: {left_lines} lines, {left_bytes} bytes, ≈"
        )),
        "{}",
        c.text.lines().next().unwrap()
    );
    assert!(c.text.lines().next().unwrap().contains("grep="));
}

#[test]
fn an_output_without_failures_keeps_the_whole_budget_for_head_and_tail() {
    let text = numbered(10_000, "\n");
    let c = compress(&text, 10).expect("compressed");
    assert!(!c.text.contains("[line "));
    assert!(c.text.contains("\n… 9940 lines omitted (41–9980) …\n"));
}

#[test]
fn many_failures_stay_within_the_failure_budget() {
    let text = (1..=5_000)
        .map(|i| format!("{i}: error: something broke in module {i}\n"))
        .collect::<String>();
    let c = compress(&text, 10).expect("compressed");
    let kept = c.text.lines().filter(|l| l.starts_with("[line ")).count();
    assert!(kept > 0 && kept <= smarter_compact::compress::FAILURE_LINES);
    let failure_bytes: usize = c
        .text
        .lines()
        .filter(|l| l.starts_with("[line "))
        .map(|l| l.len() + 1)
        .sum();
    assert!(failure_bytes <= smarter_compact::compress::FAILURE_BUDGET_BYTES);
    assert!(c.text.contains("look like failures, the first"));
}
