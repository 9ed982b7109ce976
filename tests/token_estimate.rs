//! Calibration of the token estimator against real BPE tokenizers.
//!
//! Every message of the 32 real sessions, split the way the engine sees it (assistant prose,
//! the bash command as JSON tool-call arguments, tool outputs, task prompts), plus the
//! reference texts and a set of multilingual texts, is counted with o200k_base (the main
//! target, GPT-4o/5 family) and cl100k_base (closer to Claude's counts) and compared with
//! `estimate_text`. Prints a table per content kind and asserts bounds that a crude estimator
//! (characters / 4) fails.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use smarter_compact::tokens::estimate_text;
use tiktoken_rs::CoreBPE;

/// Content kinds, in table order.
const KINDS: [&str; 7] = [
    "prose",
    "instructions",
    "json",
    "code",
    "logs",
    "unicode",
    "reference",
];

/// Multilingual and symbol-heavy texts (the reference texts hold only one Unicode-heavy text).
const UNICODE_TEXTS: [&str; 16] = [
    "Grüße aus München! Die Straße ist heute wegen Bauarbeiten gesperrt, bitte nehmen Sie die Umleitung über den Marienplatz.",
    "Le café était fermé, alors nous avons déjeuné à la boulangerie près de l'hôtel de ville. Où êtes-vous allés ensuite ?",
    "El niño pequeño comió una manzana y después se durmió en el sofá. ¿Mañana vamos a la playa o a la montaña?",
    "Привет! Сегодня мы обновили сервер базы данных и перезапустили все фоновые задачи. Ошибок пока не обнаружено.",
    "Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο. Ευχαριστώ πολύ για τη βοήθειά σας.",
    "我们今天修复了数据库连接池的一个严重错误，现在所有测试都通过了。请在合并之前再检查一遍日志。",
    "東京の天気は晴れですが、午後から雨が降る予定です。傘を持って出かけてください。",
    "안녕하세요! 오늘 회의는 오후 세 시에 시작합니다. 자료를 미리 검토해 주세요.",
    "مرحبا بكم في المدينة. نتمنى لكم إقامة سعيدة ومريحة في فندقنا الجديد.",
    "नमस्ते! आज हम सर्वर को अपडेट करेंगे और सभी परीक्षण फिर से चलाएंगे।",
    "Tiếng Việt có nhiều dấu thanh: người, được, những, trường học và điện thoại.",
    "✅ Build passed 🎉 — deployed to staging 🚀 (3 warnings ⚠️, 0 errors ❌) 👍👍",
    "→ ← ↑ ↓ ≤ ≥ ≠ ∑ ∫ √ ∞ ± × ÷ ∈ ∉ ⊂ ⊆ ∀ ∃ λ α β γ δ ε",
    "┌──────┬──────┐\n│ name │ size │\n├──────┼──────┤\n│ foo  │ 12kB │\n└──────┴──────┘\n",
    "# 计算总和 (compute the sum)\ndef 合计(数值列表):\n    return sum(数值列表)  # 返回结果\n",
    "“Smart quotes” and ‘single quotes’ — plus an ellipsis… and a non‑breaking hyphen.",
];

// Bounds against o200k_base. Slight over-estimation is preferred (trimming early is safe,
// late is not), so the bias bounds lean up.
/// Bias of the total over all content, in percent.
const TOTAL_BIAS: (f64, f64) = (-3.0, 6.0);
/// Bias of each kind's total, in percent.
const KIND_BIAS: (f64, f64) = (-6.0, 10.0);
/// Mean absolute error per non-empty message, all content, in percent.
const MAX_MEAN_ERROR: f64 = 10.0;
/// 90th percentile of the absolute error of messages of at least 50 tokens, in percent:
/// over all content, and per kind (kinds with at least 20 such messages).
const MAX_P90: f64 = 12.0;
const MAX_KIND_P90: f64 = 15.0;
/// Against cl100k_base (secondary): total bias, and the bias of each kind but Unicode-heavy
/// text, on which cl100k spends 1.5-3 times more tokens than o200k.
const CL100K_TOTAL_BIAS: (f64, f64) = (-8.0, 8.0);
const CL100K_KIND_BIAS: (f64, f64) = (-10.0, 12.0);

struct Item {
    kind: &'static str,
    text: String,
    o200k: u32,
    cl100k: u32,
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The assistant's command: the first ```bash block, and the text around it.
fn bash_block(s: &str) -> Option<(String, String)> {
    let start = s.find("```bash")?;
    let body = start + "```bash".len();
    let end = body + s[body..].find("```")?;
    let cmd = s[body..end].trim().to_string();
    let rest = format!("{}{}", &s[..start], &s[end + 3..])
        .trim()
        .to_string();
    Some((rest, cmd))
}

/// Kind of a tool output: JSON, code (diffs, numbered listings, source) or logs (the rest).
fn classify_output(t: &str) -> &'static str {
    let body = t.split_once("<output>").map_or(t, |x| x.1);
    let body = body.rsplit_once("</output>").map_or(body, |x| x.0).trim();
    if (body.starts_with('{') || body.starts_with('['))
        && serde_json::from_str::<Value>(body).is_ok()
    {
        return "json";
    }
    let lines: Vec<&str> = body.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return "logs";
    }
    if lines
        .iter()
        .any(|l| l.starts_with("diff --git") || l.starts_with("@@ -"))
    {
        return "code";
    }
    let numbered = |l: &&&str| {
        let s = l.trim_start();
        let d = s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        d > 0 && s[d..].starts_with('\t')
    };
    if lines.iter().filter(numbered).count() * 2 >= lines.len() {
        return "code";
    }
    const SOURCE: [&str; 20] = [
        "def ", "class ", "import ", "from ", "return", "if ", "elif ", "else:", "for ", "while ",
        "try:", "except", "with ", "raise ", "@", "#", ")", "]", "}", "\"\"\"",
    ];
    let source = |l: &&&str| {
        let t = l.trim_start();
        l.len() - t.len() >= 4 || SOURCE.iter().any(|k| t.starts_with(k))
    };
    if lines.iter().filter(source).count() * 10 >= lines.len() * 6 {
        "code"
    } else {
        "logs"
    }
}

/// Every text of the corpus with its kind.
fn corpus() -> Vec<(&'static str, String)> {
    let mut items = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(data_dir().join("sessions/swe-traj"))
        .expect("sessions dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 32, "expected the 32 real sessions");
    for p in files {
        let d: Value = serde_json::from_str(&std::fs::read_to_string(&p).expect("read"))
            .expect("session json");
        for m in d["messages"].as_array().expect("messages") {
            let t = m["content"].as_str().unwrap_or_default().to_string();
            match m["role"].as_str().unwrap_or_default() {
                // The engine sees the prose as text and the command as tool-call arguments.
                "assistant" => match bash_block(&t) {
                    Some((rest, cmd)) => {
                        if !rest.is_empty() {
                            items.push(("prose", rest));
                        }
                        items.push(("json", json!({ "command": cmd }).to_string()));
                    }
                    None => items.push(("prose", t)),
                },
                "user" if t.starts_with("<returncode>") => items.push((classify_output(&t), t)),
                "user" if t.starts_with("diff --git") => items.push(("code", t)),
                // System prompt, task description, format reminders: prose with code samples.
                _ => items.push(("instructions", t)),
            }
        }
    }
    let path = data_dir().join("embeddings/minilm_reference.json");
    let d: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("read reference"))
        .expect("reference json");
    for t in d["texts"].as_array().expect("texts") {
        let t = t.as_str().expect("text").to_string();
        let non_ascii = t.chars().filter(|c| !c.is_ascii()).count();
        let kind = if non_ascii * 10 >= t.chars().count().max(1) {
            "unicode"
        } else {
            "reference"
        };
        items.push((kind, t));
    }
    items.extend(UNICODE_TEXTS.iter().map(|t| ("unicode", t.to_string())));
    items
}

fn count(bpe: &CoreBPE, text: &str) -> u32 {
    u32::try_from(bpe.encode_ordinary(text).len()).expect("count")
}

#[derive(Default)]
struct Stats {
    count: usize,
    truth: u64,
    estimate: u64,
    bias: f64,
    mean_error: f64,
    p90: f64,
    /// Messages of at least 50 tokens, and their 90th-percentile error.
    large: usize,
    p90_large: f64,
}

fn p90(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 * 0.9).ceil() as usize).clamp(1, v.len()) - 1]
}

fn stats(pairs: &[(u32, u32)]) -> Stats {
    let truth: u64 = pairs.iter().map(|p| u64::from(p.0)).sum();
    let estimate: u64 = pairs.iter().map(|p| u64::from(p.1)).sum();
    let err = |&(t, e): &(u32, u32)| (f64::from(e) - f64::from(t)).abs() / f64::from(t) * 100.0;
    let errors: Vec<f64> = pairs.iter().filter(|p| p.0 > 0).map(err).collect();
    let large: Vec<f64> = pairs.iter().filter(|p| p.0 >= 50).map(err).collect();
    Stats {
        count: pairs.len(),
        truth,
        estimate,
        bias: (estimate as f64 / truth.max(1) as f64 - 1.0) * 100.0,
        mean_error: errors.iter().sum::<f64>() / errors.len().max(1) as f64,
        p90: p90(errors),
        large: large.len(),
        p90_large: p90(large),
    }
}

/// (true, estimated) per item of a kind (all items for `None`).
fn pairs(
    items: &[Item],
    kind: Option<&str>,
    truth: fn(&Item) -> u32,
    estimate: &dyn Fn(&str) -> u32,
) -> Vec<(u32, u32)> {
    items
        .iter()
        .filter(|i| kind.is_none_or(|k| i.kind == k))
        .map(|i| (truth(i), estimate(&i.text)))
        .collect()
}

fn table(title: &str, items: &[Item], truth: fn(&Item) -> u32, estimate: &dyn Fn(&str) -> u32) {
    eprintln!("\n{title}");
    eprintln!(
        "{:<13}{:>6}{:>11}{:>11}{:>8}{:>8}{:>8}{:>7}{:>9}",
        "kind", "count", "true", "estimated", "bias%", "mae%", "p90%", "n>=50", "p90>=50%"
    );
    let kinds = KINDS.iter().map(|k| Some(*k)).chain([None]);
    for kind in kinds {
        let s = stats(&pairs(items, kind, truth, estimate));
        eprintln!(
            "{:<13}{:>6}{:>11}{:>11}{:>8.1}{:>8.1}{:>8.1}{:>7}{:>9.1}",
            kind.unwrap_or("all"),
            s.count,
            s.truth,
            s.estimate,
            s.bias,
            s.mean_error,
            s.p90,
            s.large,
            s.p90_large
        );
    }
}

fn outside(v: f64, (lo, hi): (f64, f64)) -> bool {
    !(lo..=hi).contains(&v)
}

/// The bounds an estimator breaks (empty if it holds them all).
fn violations(items: &[Item], estimate: &dyn Fn(&str) -> u32) -> Vec<String> {
    let mut out = Vec::new();
    let o200k: fn(&Item) -> u32 = |i| i.o200k;
    let cl100k: fn(&Item) -> u32 = |i| i.cl100k;
    let all = stats(&pairs(items, None, o200k, estimate));
    if outside(all.bias, TOTAL_BIAS) {
        out.push(format!(
            "o200k total bias {:.1}% outside {TOTAL_BIAS:?}",
            all.bias
        ));
    }
    if all.mean_error > MAX_MEAN_ERROR {
        out.push(format!(
            "o200k mean error {:.1}% > {MAX_MEAN_ERROR}",
            all.mean_error
        ));
    }
    if all.p90_large > MAX_P90 {
        out.push(format!(
            "o200k p90 error (>= 50 tokens) {:.1}% > {MAX_P90}",
            all.p90_large
        ));
    }
    for kind in KINDS {
        let s = stats(&pairs(items, Some(kind), o200k, estimate));
        if outside(s.bias, KIND_BIAS) {
            out.push(format!(
                "o200k {kind} bias {:.1}% outside {KIND_BIAS:?}",
                s.bias
            ));
        }
        if s.large >= 20 && s.p90_large > MAX_KIND_P90 {
            out.push(format!(
                "o200k {kind} p90 error (>= 50 tokens) {:.1}% > {MAX_KIND_P90}",
                s.p90_large
            ));
        }
        let c = stats(&pairs(items, Some(kind), cl100k, estimate));
        if kind != "unicode" && outside(c.bias, CL100K_KIND_BIAS) {
            out.push(format!(
                "cl100k {kind} bias {:.1}% outside {CL100K_KIND_BIAS:?}",
                c.bias
            ));
        }
    }
    let c = stats(&pairs(items, None, cl100k, estimate));
    if outside(c.bias, CL100K_TOTAL_BIAS) {
        out.push(format!(
            "cl100k total bias {:.1}% outside {CL100K_TOTAL_BIAS:?}",
            c.bias
        ));
    }
    out
}

#[test]
fn estimate_matches_bpe_tokenizers_by_content_kind() {
    let o200k = tiktoken_rs::o200k_base().expect("o200k_base");
    let cl100k = tiktoken_rs::cl100k_base().expect("cl100k_base");
    let items: Vec<Item> = corpus()
        .into_iter()
        .map(|(kind, text)| Item {
            kind,
            o200k: count(&o200k, &text),
            cl100k: count(&cl100k, &text),
            text,
        })
        .collect();
    for kind in KINDS {
        assert!(items.iter().any(|i| i.kind == kind), "no {kind} text");
    }

    let estimate = |t: &str| estimate_text(t);
    table(
        "estimate_text vs o200k_base",
        &items,
        |i| i.o200k,
        &estimate,
    );
    table(
        "estimate_text vs cl100k_base",
        &items,
        |i| i.cl100k,
        &estimate,
    );

    // The bounds must mean something: characters / 4 breaks at least one of them.
    let chars4 = |t: &str| u32::try_from(t.chars().count().div_ceil(4)).unwrap_or(u32::MAX);
    table("chars/4 vs o200k_base", &items, |i| i.o200k, &chars4);
    let crude = violations(&items, &chars4);
    eprintln!("\nchars/4 breaks: {crude:#?}");
    assert!(!crude.is_empty(), "the bounds do not catch chars/4");

    let broken = violations(&items, &estimate);
    assert!(broken.is_empty(), "estimate_text breaks: {broken:#?}");
}
