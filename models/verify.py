#!/usr/bin/env python3
"""Check an ONNX build of all-MiniLM-L6-v2 against sentence-transformers reference vectors.

Runs the graph with onnxruntime, tokenizes with the `tokenizers` package
(truncation 256, no padding), mean-pools last_hidden_state over the attention
mask, L2-normalises, and compares with the reference vectors by cosine.
Two passes: one text at a time (as the reference was made) and all texts in a
single right-padded batch (checks the attention mask).  Exit 1 if any cosine is
below --min-cos (default 0.999).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

HERE = Path(__file__).resolve().parent
MAX_SEQ_LENGTH = 256


def default_reference() -> Path:
    return HERE.parent / "tests" / "data" / "embeddings" / "minilm_reference.json"


def embed(sess: ort.InferenceSession, encs) -> np.ndarray:
    seq = max(len(e.ids) for e in encs)
    ids = np.zeros((len(encs), seq), dtype=np.int64)
    mask = np.zeros((len(encs), seq), dtype=np.int64)
    for r, e in enumerate(encs):
        ids[r, : len(e.ids)] = e.ids
        mask[r, : len(e.ids)] = 1
    (hidden,) = sess.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask})
    m = mask[:, :, None].astype(np.float32)
    pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
    return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=HERE / "out" / "minilm-l6-v2.onnx")
    ap.add_argument("--tokenizer", type=Path, default=HERE / "out" / "tokenizer.json")
    ap.add_argument("--reference", type=Path, default=default_reference())
    ap.add_argument("--min-cos", type=float, default=0.999)
    args = ap.parse_args()

    ref = json.loads(args.reference.read_text(encoding="utf-8"))
    texts, want = ref["texts"], np.asarray(ref["vectors"], dtype=np.float64)
    want /= np.linalg.norm(want, axis=1, keepdims=True)  # reference is rounded to 7 digits

    tok = Tokenizer.from_file(str(args.tokenizer))
    tok.enable_truncation(MAX_SEQ_LENGTH)  # already in our tokenizer.json; be explicit
    tok.no_padding()
    encs = [tok.encode(t) for t in texts]

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    t0 = time.perf_counter()
    sess = ort.InferenceSession(str(args.model), opts, providers=["CPUExecutionProvider"])
    t_load = time.perf_counter() - t0

    t0 = time.perf_counter()
    single = np.concatenate([embed(sess, [e]) for e in encs])
    t_single = time.perf_counter() - t0
    batched = embed(sess, encs)

    ok = True
    print(f"model {args.model} ({args.model.stat().st_size} bytes), load {t_load:.2f}s, "
          f"{len(texts)} texts one by one {t_single:.2f}s, max tokens {max(len(e.ids) for e in encs)}")
    for label, got in (("one-by-one", single), ("padded batch", batched)):
        cos = (got * want).sum(axis=1)
        worst = int(np.argmin(cos))
        print(f"{label:13s} cos min {cos.min():.7f} mean {cos.mean():.7f} "
              f"(1-min {1 - cos.min():.1e})  "
              f"(worst #{worst}: {texts[worst][:40]!r})")
        ok &= bool(cos.min() >= args.min_cos)
    print("OK" if ok else f"FAIL: cosine below {args.min_cos}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
