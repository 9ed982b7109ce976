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
/// fatal error or assertion, or a non-zero exit status.
pub fn looks_like_failure(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    if MARKERS.iter().any(|m| lower.contains(m)) {
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
            "exit status 127",
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
            "   Downloaded 3 crates",
            "",
            "é漢𝄞 unicode is fine",
        ] {
            assert!(!looks_like_failure(line), "{line:?}");
        }
    }
}
