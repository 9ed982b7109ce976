#!/usr/bin/env python3
"""Write the int8 variants of the f32 all-MiniLM-L6-v2 ONNX file built by build_model.py.

Two ways of storing the weights in 8 bits, both read from out/minilm-l6-v2.onnx:

  out/minilm-l6-v2-int8.onnx      weight-only int8 (the shipped model): every 2-D float
                                  initializer (the 36 MatMul weights, the word and position
                                  tables) stored as int8, symmetric, zero point 0, with float32
                                  scales: a MatMul weight [in, out] in blocks of BLOCK input
                                  rows, one scale per output column and block (the blocks
                                  joined by a Concat); a table one scale per row.  A
                                  DequantizeLinear in front of each use; the arithmetic stays
                                  float32 (tract wasm runs it at the f32 speed, tract native
                                  slower: bench/EMBED.md).  (One scale per
                                  whole column measured cos min 0.9963 against
                                  sentence-transformers, blocks of 32 rows 0.9995.)
  out/minilm-l6-v2-dynint8.onnx   onnxruntime.quantization.quantize_dynamic: int8 per-channel
                                  MatMul weights and uint8 activations quantized at run time
                                  (DynamicQuantizeLinear + MatMulInteger); the tables stay
                                  float32.  Measured, not shipped (models/README.md).

The fp16-stored variant comes from `build_model.py --fp16`.  Output bytes are deterministic:
the same f32 file and the same pinned packages give the same sha256 (models/SHA256SUMS).
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = Path(__file__).resolve().parent
F32 = "minilm-l6-v2.onnx"
INT8 = "minilm-l6-v2-int8.onnx"
DYNINT8 = "minilm-l6-v2-dynint8.onnx"
BLOCK = 32  # input rows of a MatMul weight that share one scale per output column


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def set_storage(model: onnx.ModelProto, storage: str) -> None:
    """Replaces the `weights_storage` model property (build_model.py writes "float32")."""
    props = {p.key: p.value for p in model.metadata_props}
    props["weights_storage"] = storage
    del model.metadata_props[:]
    helper.set_model_props(model, props)


def quantize_axis(uses: list[tuple[str, int]]) -> int | None:
    """The axis that gets its own scale, or None to keep the tensor as it is: the output column
    of a MatMul's weight (input 1), the row of a table read by Gather/Slice (input 0)."""
    if uses and all(op == "MatMul" and k == 1 for op, k in uses):
        return 1
    if uses and all(op in ("Gather", "Slice") and k == 0 for op, k in uses):
        return 0
    return None


def weight_only_int8(model: onnx.ModelProto) -> onnx.ModelProto:
    """The weight-only int8 graph: symmetric int8 + DequantizeLinear, float32 compute."""
    g = model.graph
    uses: dict[str, list[tuple[str, int]]] = {}
    for n in g.node:
        for k, x in enumerate(n.input):
            uses.setdefault(x, []).append((n.op_type, k))
    inits: list[onnx.TensorProto] = []
    dequant: list[onnx.NodeProto] = []

    def int8(a: np.ndarray, axis: int, name: str) -> None:
        """`name` = DequantizeLinear of `a` in int8, one scale per index of `axis`."""
        scale = np.abs(a).max(axis=1 - axis) / 127.0
        scale[scale == 0] = 1.0
        shaped = scale[None, :] if axis == 1 else scale[:, None]
        q = np.clip(np.rint(a / shaped), -127, 127).astype(np.int8)
        inits.extend([
            numpy_helper.from_array(q, name + ".int8"),
            numpy_helper.from_array(scale.astype(np.float32), name + ".scale"),
            numpy_helper.from_array(np.zeros(scale.shape, dtype=np.int8), name + ".zero"),
        ])
        dequant.append(helper.make_node(
            "DequantizeLinear", [name + ".int8", name + ".scale", name + ".zero"], [name],
            name=f"dq_{name}", axis=axis))

    tensors = 0
    for t in g.initializer:
        axis = quantize_axis(uses.get(t.name, [])) if len(t.dims) == 2 else None
        if axis is None or t.data_type != onnx.TensorProto.FLOAT:
            inits.append(t)
            continue
        tensors += 1
        a = numpy_helper.to_array(t).astype(np.float32)
        if axis == 0 or a.shape[0] <= BLOCK:
            int8(a, axis, t.name)
            continue
        blocks = [f"{t.name}.rows{r}" for r in range(0, a.shape[0], BLOCK)]
        for r, name in zip(range(0, a.shape[0], BLOCK), blocks):
            int8(a[r:r + BLOCK], 1, name)
        dequant.append(helper.make_node("Concat", blocks, [t.name], name=f"cat_{t.name}", axis=0))
    nodes = dequant + list(g.node)
    del g.initializer[:]
    g.initializer.extend(inits)
    del g.node[:]
    g.node.extend(nodes)
    set_storage(model, f"int8 symmetric ({tensors} tensors; MatMul weights: one scale per output "
                       f"column per {BLOCK} input rows, tables: per row) + DequantizeLinear; "
                       "compute float32")
    onnx.checker.check_model(model, full_check=True)
    return model


def dynamic_int8(src: Path) -> onnx.ModelProto:
    """onnxruntime's dynamic quantization of the MatMul weights (int8, per output channel)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / DYNINT8
        quantize_dynamic(src, out, weight_type=QuantType.QInt8, per_channel=True,
                         reduce_range=False, op_types_to_quantize=["MatMul"])
        model = onnx.load(out)
    set_storage(model, "onnxruntime quantize_dynamic: MatMul weights int8 per channel, "
                       "activations uint8 at run time")
    onnx.checker.check_model(model, full_check=True)
    return model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=HERE / "out",
                    help=f"folder holding {F32}; the variants are written next to it")
    ap.add_argument("--only", choices=["int8", "dynint8"], help="write one variant only")
    args = ap.parse_args()
    src = args.out / F32
    jobs = {"int8": (INT8, lambda: weight_only_int8(onnx.load(src))),
            "dynint8": (DYNINT8, lambda: dynamic_int8(src))}
    for key, (name, make) in jobs.items():
        if args.only and args.only != key:
            continue
        dst = args.out / name
        dst.write_bytes(make().SerializeToString(deterministic=True))
        print(f"{sha256(dst)}  {dst}  ({dst.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
