# SPDX-License-Identifier: MIT
"""
A LLaMA-style decoder exported "with past" for issue 16's benchmark, built
with onnx.helper (no torch): by default LLaMA-2-7B's real dimensions (hidden
4096, 32 heads, 32 KV heads, head dim 128, FFN 11008, vocabulary 32000,
RMSNorm, rotary, SwiGLU, untied LM head) but only 2 layers, with seeded
weights (numpy default_rng, normal draws scaled by fan-in as
tests/models/transformers/gen.py does).  The float32 weights (about 2.7 GB
at the default size) go to an ONNX external data side file OUT.data next to
OUT, written tensor by tensor in chunks with numpy's tofile (never all in
memory, never through onnx's in-memory save); each tensor starts at a
multiple of 4096 bytes, so it can be mapped in place.

Inputs, outputs and node pattern are those of the torch export of
tests/models/transformers/llama_past_op17.onnx (gen.py's LlamaPast, which
follows Hugging Face's LLaMA and optimum's "decoder with past" form):
input_ids, attention_mask [batch, past_sequence + sequence], position_ids,
past_key_values.N.key/value [batch, kv_heads, past_sequence, head_dim] in;
logits and present.N.key/value (Concat(past, new) on axis 2) out; the same
op types in the same order on the float data path.  The shape plumbing is
simpler (Reshape with 0 to copy a dim instead of Shape, Gather, Concat):
the tensors computed are the same.  With as many KV heads as heads (as
LLaMA-2-7B) repeat_kv (Unsqueeze, Expand, Reshape) is left out, as Hugging
Face's repeat_kv returns its input then.

Usage: /usr/bin/python3 gen_llama_slice.py OUT.onnx [--layers 2]
           [--hidden 4096 --heads 32 --kv-heads 32 --ffn 11008 --vocab 32000]
           [--max-pos 4096] [--seed 16] [--compare TORCH.onnx]
           [--nbits 4 [--block 32|64|128]]
Quick test size: --hidden 256 --ffn 688 --heads 4 --vocab 1024.
--nbits 4: every projection and the LM head a com.microsoft MatMulNBits on
4-bit blocks of --block along K (symmetric, as onnxruntime's
MatMul4BitsQuantizer without zero points), the embedding and norms float32.
--compare checks that the float data path of OUT has the op types of
TORCH.onnx in the same order (give the same layers and heads: gen.py's
llama_past is --layers 2 --hidden 64 --heads 4 --kv-heads 2 --ffn 128
--vocab 256 --max-pos 128), and exits 1 if not.
Needs Debian's python3-onnx and python3-numpy.  Same bytes on every run of
the same arguments.
"""
import argparse
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

ALIGN = 4096
CHUNK = 1 << 24          # floats drawn and written at a time (64 MB)
F32_MIN = float(np.finfo(np.float32).min)


class Weights:
    """The side file and the initializers that point into it."""

    def __init__(self, path, rng):
        self.path = path
        self.location = os.path.basename(path)
        self.file = open(path, "wb")
        self.rng = rng
        self.initializers = []

    def _tensor(self, name, dims, fill, elem=TensorProto.FLOAT, size=4):
        """Append a tensor of @dims (float32 unless @elem, @size bytes per
        element), written by fill(file, count)."""
        offset = self.file.tell()
        pad = -offset % ALIGN
        if pad:
            self.file.write(b"\0" * pad)
            offset += pad
        count = int(np.prod(dims))
        fill(self.file, count)
        t = TensorProto()
        t.name = name
        t.data_type = elem
        t.dims.extend(dims)
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", self.location), ("offset", str(offset)),
                     ("length", str(count * size))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self.initializers.append(t)
        return name

    def normal(self, name, dims, mean, std):
        def fill(f, count):
            for start in range(0, count, CHUNK):
                n = min(CHUNK, count - start)
                x = self.rng.standard_normal(n, dtype=np.float32)
                (x * np.float32(std) + np.float32(mean)).astype("<f4").tofile(f)
        return self._tensor(name, dims, fill)

    def linear(self, name, fan_in, fan_out):
        """A bias-free Linear as torch exports it for MatMul: [in, out]."""
        return self.normal(name, [fan_in, fan_out], 0.0, 1.0 / math.sqrt(fan_in))

    def array(self, name, a):
        return self._tensor(name, list(a.shape),
                            lambda f, count: a.astype("<f4").tofile(f))

    def uint8(self, name, a):
        return self._tensor(name, list(a.shape), lambda f, count: a.tofile(f),
                            TensorProto.UINT8, 1)

    def nbits(self, name, fan_in, fan_out, block):
        """The same seeded draw as linear(), quantised to 4 bits the way
        onnxruntime's MatMul4BitsQuantizer does without zero points
        (scale = max|w| / 7 per block of @block along K, codes around the
        operator's default zero point 8, two per byte, low nibble first):
        MatMulNBits' B [N][K/block][block/2] and scales [N * K/block]."""
        w = self.rng.standard_normal(fan_in * fan_out, dtype=np.float32)
        w = (w * np.float32(1.0 / math.sqrt(fan_in))).reshape(fan_in, fan_out).T
        kb = fan_in // block
        blocks = w.reshape(fan_out, kb, block)
        scale = np.abs(blocks).max(axis=2) / np.float32(7.0)
        scale[scale == 0] = 1.0
        q = np.clip(np.round(blocks / scale[:, :, None]) + 8, 0, 15).astype(np.uint8)
        del blocks, w
        packed = (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)
        del q
        return (self.uint8(name + ".qweight", packed),
                self.array(name + ".scales", scale.reshape(-1).astype(np.float32)))

    def close(self):
        self.file.close()


class Graph:
    """Nodes with generated output names, and small constants inline."""

    def __init__(self):
        self.nodes = []
        self.consts = []
        self.count = {}
        # Node names carry the module path, as torch.onnx.export names them
        # ("/model/layers.0/..."): make bench tells the layers' steps from
        # the rest by it.
        self.scope = ""

    def op(self, op_type, inputs, name=None, **attrs):
        n = self.count.get(op_type, 0)
        self.count[op_type] = n + 1
        out = name or "%s/%s_%d" % (self.scope, op_type, n)
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def const(self, name, value, dtype=np.int64):
        if all(c.name != name for c in self.consts):
            self.consts.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name


def rms_norm(g, x, weight):
    """x * 1 / sqrt(mean(x^2) + eps) * weight, as torch exports RMSNorm."""
    var = g.op("ReduceMean", [g.op("Pow", [x, "two"])], axes=[-1], keepdims=1)
    inv = g.op("Div", ["one", g.op("Sqrt", [g.op("Add", [var, "eps"])])])
    return g.op("Mul", [weight, g.op("Mul", [x, inv])])


def split_heads(g, x, heads):
    """[B, S, heads * D] -> [B, heads, S, D]"""
    shape = g.const("/shape_heads_%d" % heads, [0, 0, heads, -1])
    return g.op("Transpose", [g.op("Reshape", [x, shape])], perm=[0, 2, 1, 3])


def rotary(g, x, cos, sin):
    """x * cos + rotate_half(x) * sin, rotate_half by two Slices."""
    xc = g.op("Mul", [x, cos])
    hi = g.op("Neg", [g.op("Slice", [x, "/half", "/int_max", "/axis3"])])
    lo = g.op("Slice", [x, "/zero1", "/half", "/axis3"])
    rot = g.op("Concat", [hi, lo], axis=-1)
    return g.op("Add", [xc, g.op("Mul", [rot, sin])])


def repeat_kv(g, x, heads, n_rep, d):
    """Hugging Face's repeat_kv: [B, KV, T, D] -> [B, KV * n_rep, T, D], by
    a new axis 2 broadcast to n_rep and merged into the heads."""
    x = g.op("Unsqueeze", [x, "/axis2"])
    x = g.op("Expand", [x, g.const("/expand_%d" % n_rep, [1, 1, n_rep, 1, 1])])
    return g.op("Reshape", [x, g.const("/shape_rep", [0, heads, -1, d])])


def proj(g, w, a, x, name, fan_in, fan_out, out=None):
    """x @ W: a MatMul on float weights, or with --nbits a com.microsoft
    MatMulNBits on 4-bit blocks (how quantised LLMs ship in ONNX)."""
    if not a.nbits:
        return g.op("MatMul", [x, w.linear(name, fan_in, fan_out)], name=out)
    qw, scales = w.nbits(name, fan_in, fan_out, a.block)
    n = g.count.get("MatMulNBits", 0)
    g.count["MatMulNBits"] = n + 1
    y = out or "%s/MatMulNBits_%d" % (g.scope, n)
    g.nodes.append(helper.make_node("MatMulNBits", [x, qw, scales], [y], name=y,
                                    domain="com.microsoft", K=fan_in, N=fan_out,
                                    bits=4, block_size=a.block))
    return y


def layer(g, w, n, x, cos, sin, mask, a):
    d = a.hidden // a.heads
    p = "model.layers.%d." % n
    h = rms_norm(g, x, w.normal(p + "input_layernorm.weight", [a.hidden], 1.0, 0.1))
    q = split_heads(g, proj(g, w, a, h, p + "self_attn.q_proj.weight", a.hidden, a.heads * d), a.heads)
    k = split_heads(g, proj(g, w, a, h, p + "self_attn.k_proj.weight", a.hidden, a.kv_heads * d), a.kv_heads)
    v = split_heads(g, proj(g, w, a, h, p + "self_attn.v_proj.weight", a.hidden, a.kv_heads * d), a.kv_heads)
    q = rotary(g, q, cos, sin)
    k = rotary(g, k, cos, sin)
    # The cache holds the KV heads after rotary, before repeat_kv.
    k = g.op("Concat", ["past_key_values.%d.key" % n, k], name="present.%d.key" % n, axis=2)
    v = g.op("Concat", ["past_key_values.%d.value" % n, v], name="present.%d.value" % n, axis=2)
    n_rep = a.heads // a.kv_heads
    if n_rep > 1:
        k = repeat_kv(g, k, a.heads, n_rep, d)
        v = repeat_kv(g, v, a.heads, n_rep, d)
    scores = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])
    scores = g.op("Add", [g.op("Div", [scores, "/sqrt_head_dim"]), mask])
    o = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
    o = g.op("Reshape", [g.op("Transpose", [o], perm=[0, 2, 1, 3]), "/shape_merge"])
    x = g.op("Add", [x, proj(g, w, a, o, p + "self_attn.o_proj.weight", a.heads * d, a.hidden)])
    h = rms_norm(g, x, w.normal(p + "post_attention_layernorm.weight", [a.hidden], 1.0, 0.1))
    gate = proj(g, w, a, h, p + "mlp.gate_proj.weight", a.hidden, a.ffn)
    gate = g.op("Mul", [gate, g.op("Sigmoid", [gate])])
    up = proj(g, w, a, h, p + "mlp.up_proj.weight", a.hidden, a.ffn)
    down = proj(g, w, a, g.op("Mul", [gate, up]), p + "mlp.down_proj.weight", a.ffn, a.hidden)
    return g.op("Add", [x, down])


def build(a, data_path):
    d = a.hidden // a.heads
    g = Graph()
    w = Weights(data_path, np.random.default_rng(a.seed))
    g.const("two", 2.0, np.float32)
    g.const("one", 1.0, np.float32)
    g.const("eps", 1e-6, np.float32)
    g.const("/f32_min", F32_MIN, np.float32)
    g.const("/sqrt_head_dim", math.sqrt(d), np.float32)
    g.const("/half", [d // 2])
    g.const("/zero1", [0])
    g.const("/int_max", [np.iinfo(np.int64).max])
    g.const("/axis3", [3])
    for k in (0, 1, 2):
        g.const("/axis%d" % k, [k])
    g.const("/zero", 0)
    g.const("/one_i", 1)
    g.const("/shape_merge", [0, 0, a.hidden])

    # Rotary tables gathered by position: [B, 1, S, D].
    inv_freq = 1.0 / (10000.0 ** (np.arange(0, d, 2, dtype=np.float32) / d))
    freqs = np.outer(np.arange(a.max_pos, dtype=np.float32), inv_freq)
    emb = np.concatenate((freqs, freqs), axis=-1)
    cos = g.op("Unsqueeze", [g.op("Gather", [w.array("cos_cached", np.cos(emb)), "position_ids"], axis=0), "/axis1"])
    sin = g.op("Unsqueeze", [g.op("Gather", [w.array("sin_cached", np.sin(emb)), "position_ids"], axis=0), "/axis1"])

    # Hugging Face's 4-D mask: query i sits at t - s + i and sees keys
    # j <= t - s + i; then padded keys (attention_mask 0) filled with min.
    s = g.op("Gather", [g.op("Shape", ["input_ids"]), "/one_i"], axis=0)
    t = g.op("Gather", [g.op("Shape", ["attention_mask"]), "/one_i"], axis=0)
    i = g.op("Add", [g.op("Unsqueeze", [g.op("Range", ["/zero", s, "/one_i"]), "/axis1"]),
                     g.op("Sub", [t, s])])
    j = g.op("Unsqueeze", [g.op("Range", ["/zero", t, "/one_i"]), "/axis0"])
    zeros = g.op("ConstantOfShape", [g.op("Concat", [g.op("Unsqueeze", [s, "/axis0"]),
                                                     g.op("Unsqueeze", [t, "/axis0"])], axis=0)],
                 value=helper.make_tensor("zero_f", TensorProto.FLOAT, [1], [0.0]))
    causal = g.op("Where", [g.op("Greater", [j, i]), "/f32_min", zeros])
    causal = g.op("Unsqueeze", [g.op("Unsqueeze", [causal, "/axis0"]), "/axis0"])
    pad = g.op("Equal", [g.op("Unsqueeze", [g.op("Unsqueeze", ["attention_mask", "/axis1"]), "/axis1"]), "/zero"])
    mask = g.op("Where", [pad, "/f32_min", causal])

    x = g.op("Gather", [w.normal("model.embed_tokens.weight", [a.vocab, a.hidden], 0.0, 0.5), "input_ids"], axis=0)
    for n in range(a.layers):
        g.scope = "/model/layers.%d" % n
        x = layer(g, w, n, x, cos, sin, mask, a)
    g.scope = ""
    x = rms_norm(g, x, w.normal("model.norm.weight", [a.hidden], 1.0, 0.1))
    proj(g, w, a, x, "lm_head.weight", a.hidden, a.vocab, out="logits")
    w.close()

    def io(name, elem, dims):
        return helper.make_tensor_value_info(name, elem, dims)
    total = "past_sequence + sequence"
    inputs = [io("input_ids", TensorProto.INT64, ["batch", "sequence"]),
              io("attention_mask", TensorProto.INT64, ["batch", total]),
              io("position_ids", TensorProto.INT64, ["batch", "sequence"])]
    outputs = [io("logits", TensorProto.FLOAT, ["batch", "sequence", a.vocab])]
    for n in range(a.layers):
        for kind in ("key", "value"):
            inputs.append(io("past_key_values.%d.%s" % (n, kind), TensorProto.FLOAT,
                             ["batch", a.kv_heads, "past_sequence", d]))
            outputs.append(io("present.%d.%s" % (n, kind), TensorProto.FLOAT,
                              ["batch", a.kv_heads, total, d]))
    graph = helper.make_graph(g.nodes, "llama_slice", inputs, outputs,
                              initializer=g.consts + w.initializers)
    opsets = [helper.make_opsetid("", 17)]
    if a.nbits:
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, producer_name="gen_llama_slice.py", opset_imports=opsets)
    model.ir_version = 8
    return model


def data_path_ops(model):
    """Op types of the nodes that compute float tensors, in order (the data
    path; Constant nodes and int64 shape plumbing left out)."""
    m = shape_inference.infer_shapes(model)
    types = {v.name: v.type.tensor_type.elem_type
             for v in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output)}
    types.update({i.name: i.data_type for i in m.graph.initializer})
    return [n.op_type for n in m.graph.node if n.op_type != "Constant" and
            any(types.get(o) == TensorProto.FLOAT for o in n.output)]


def compare(model, torch_path, a):
    ours = data_path_ops(model)
    theirs = data_path_ops(onnx.load(torch_path, load_external_data=False))
    if a.heads == a.kv_heads:
        # Hugging Face's repeat_kv returns its input with one group per head.
        s = " ".join(theirs).replace("Unsqueeze Expand Reshape ", "")
        theirs = s.split()
    for i, (x, y) in enumerate(zip(ours, theirs)):
        if x != y:
            print("data path differs at op %d: %s here, %s in %s\n  here:  %s\n  torch: %s" %
                  (i, x, y, torch_path, " ".join(ours[max(0, i - 8):i + 8]),
                   " ".join(theirs[max(0, i - 8):i + 8])))
            return False
    if len(ours) != len(theirs):
        print("data path has %d ops here, %d in %s" % (len(ours), len(theirs), torch_path))
        return False
    print("data path matches %s: %d ops in the same order" % (torch_path, len(ours)))
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=None, help="default: --heads")
    p.add_argument("--ffn", type=int, default=11008)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--max-pos", type=int, default=4096)
    p.add_argument("--seed", type=int, default=16)
    p.add_argument("--compare", metavar="TORCH.onnx")
    p.add_argument("--nbits", type=int, choices=(4,), default=None,
                   help="the projections and the LM head as 4-bit MatMulNBits")
    p.add_argument("--block", type=int, choices=(32, 64, 128), default=32)
    a = p.parse_args()
    a.kv_heads = a.kv_heads or a.heads
    if a.nbits and (a.hidden % a.block or a.ffn % a.block):
        sys.exit("gen_llama_slice: --hidden and --ffn must be multiples of --block")
    if a.compare and a.nbits:
        sys.exit("gen_llama_slice: --compare checks float models: leave out --nbits")
    if a.hidden % a.heads or (a.hidden // a.heads) % 2 or a.heads % a.kv_heads:
        sys.exit("gen_llama_slice: --hidden must be --heads times an even head dim, "
                 "and --heads a multiple of --kv-heads")
    data = a.out + ".data"
    model = build(a, data + ".tmp")
    for t in model.graph.initializer:
        for e in t.external_data:
            if e.key == "location":
                e.value = os.path.basename(data)
    onnx.save(model, a.out + ".tmp")
    os.replace(data + ".tmp", data)
    os.replace(a.out + ".tmp", a.out)
    onnx.checker.check_model(a.out)
    params = sum(int(np.prod(t.dims)) for t in model.graph.initializer
                 if t.data_location == TensorProto.EXTERNAL)
    print("%s: %d layers, hidden %d, %d heads (%d KV), FFN %d, vocabulary %d, %d nodes; "
          "%s: %d weight elements (%s), %d bytes" %
          (a.out, a.layers, a.hidden, a.heads, a.kv_heads, a.ffn, a.vocab, len(model.graph.node),
           data, params, "projections 4-bit, block %d" % a.block if a.nbits else "float32",
           os.path.getsize(data)))
    if a.compare and not compare(model, a.compare, a):
        sys.exit(1)


if __name__ == "__main__":
    main()
