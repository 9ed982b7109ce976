//! Which lines of a tool output look like failures: the lines a compressed output keeps from
//! its omitted middle, so a test run that failed halfway does not read as a success.

/// Words that mark a failure, matched case-insensitively anywhere in a line.
const MARKERS: [&str; 10] = [
    "err!",
    "error",
    "exception",
    "traceback",
    "fail",
    "panic",
    "fatal",
    "assert",
    "segmentation fault",
    "abort",
];

/// Phrases followed by a process's exit status: a failure when the number is not 0.
const EXIT_PHRASES: [&str; 4] = [
    "exit code",
    "exit status",
    "exited with",
    "returned non-zero",
];

/// Whether `line` looks like a failure: an error, exception, traceback, failed test, panic,
/// fatal error or assertion, or a non-zero exit status. A marker word counting zero (`0 failed`,
/// `0 errors`, `failed: 0`, `errors=0`) is a passing summary, not a failure.
pub fn looks_like_failure(line: &str) -> bool {
    if reports_a_pass(line) {
        return false;
    }
    let lower = line.to_ascii_lowercase();
    let marked = MARKERS.iter().any(|m| {
        lower
            .match_indices(m)
            .any(|(at, _)| !counts_zero(&lower, at, at + m.len()))
    });
    if marked {
        return true;
    }
    EXIT_PHRASES.iter().any(|p| {
        lower.match_indices(p).any(|(at, _)| {
            let rest = lower[at + p.len()..].trim_start_matches([' ', ':', '=', '(']);
            if p.starts_with("returned") {
                return true;
            }
            let digits: String = rest
                .trim_start_matches("code ")
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect();
            !digits.trim_start_matches(['0', '-']).is_empty()
        })
    })
}

/// Whether a test runner's line reports a passing test, whatever its name says
/// (`test_on_error PASSED`, `test parse_error ... ok`, `--- PASS: TestError`, `✓ handles errors`):
/// such a line is not a failure even when the test is named after one.
fn reports_a_pass(line: &str) -> bool {
    let t = line.trim();
    let shouting_failure = ["FAILED", "FAIL:", "ERROR"].iter().any(|w| t.contains(w));
    !shouting_failure
        && (t.contains(" PASSED")
            || t.ends_with("... ok")
            || t.starts_with("--- PASS")
            || t.starts_with("PASS ")
            || t.starts_with(['✓', '✔', '√']))
}

/// Whether the word around `lower[start..end]` is a zero count: `0` just before it (`0 failed`)
/// or just after it, alone or after `:` or `=` (`failed: 0`, `errors=0`).
fn counts_zero(lower: &str, start: usize, end: usize) -> bool {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let start = lower[..start].trim_end_matches(is_word).len();
    let end = lower.len() - lower[end..].trim_start_matches(is_word).len();
    // `0 failed`: a number of zeros, not part of a longer number or word, then spaces.
    let before = lower[..start].trim_end_matches(' ');
    let zeros = before.trim_end_matches('0');
    let zero_before = before.len() > zeros.len()
        && before.len() < start
        && !zeros.ends_with(|c: char| is_word(c) || c == '.' || c == '-');
    // `failed: 0`, `errors=0`: zeros, not followed by another digit or a decimal part.
    let after = lower[end..].trim_start_matches(' ');
    let after = after
        .strip_prefix([':', '='])
        .unwrap_or(after)
        .trim_start_matches(' ');
    let rest = after.trim_start_matches('0');
    let zero_after =
        rest.len() < after.len() && !rest.starts_with(|c: char| is_word(c) || c == '.');
    zero_before || zero_after
}

#[cfg(test)]
mod tests {
    use super::looks_like_failure;

    #[test]
    fn failures_of_the_usual_tools() {
        for line in [
            "FAILED tests/test_api.py::test_login - AssertionError: 401 != 200",
            "--- FAIL: TestParse (0.00s)",
            "error[E0308]: mismatched types",
            "Traceback (most recent call last):",
            "thread 'main' panicked at src/lib.rs:10:5:",
            "fatal: not a git repository",
            "npm ERR! code ELIFECYCLE",
            "Process exited with code 2",
            "make: *** [Makefile:12: test] Error 1",
            "command returned non-zero exit status 1",
            "Segmentation fault (core dumped)",
            "tests/test_api.py::test_login FAILED (PASSED on retry: no)",
            "test parse_error ... FAILED",
            "exit status 127",
            "test result: FAILED. 39 passed; 1 failed; 0 ignored",
            "10 failed, 0 errors",
            "1 error; 0 warnings",
            "errors: 3",
            "failed=0.5",
            "0 passed; 2 failed",
        ] {
            assert!(looks_like_failure(line), "{line:?}");
        }
    }

    #[test]
    fn ordinary_lines_are_not_failures() {
        for line in [
            "test result: ok. 12 passed; 0 skipped",
            "Compiling serde v1.0.200",
            "Process exited with code 0",
            "exit status 0",
            "test result: ok. 40 passed; 0 failed; 0 ignored; 0 measured",
            "Found 0 errors.",
            "0 errors, 0 warnings",
            "failed: 0",
            "errors=0 failures=0",
            "Tests: 12 passed, 0 failed, 12 total",
            "   Downloaded 3 crates",
            "tests/test_api.py::test_login_error PASSED                    [ 42%]",
            "test store::tests::bad_id_is_an_error ... ok",
            "--- PASS: TestParseError (0.00s)",
            "  ✓ reports a failure to the user (3 ms)",
            "PASS src/errors.test.ts",
            "",
            "é漢𝄞 unicode is fine",
        ] {
            assert!(!looks_like_failure(line), "{line:?}");
        }
    }
}
