# SPDX-License-Identifier: MIT
"""
The transformer test models (issue 15 part 5): four small modules written
here (BERT-, GPT-2-, LLaMA- and ViT-style; no Hugging Face code), seeded,
exported with torch.onnx.export the way Hugging Face exports them (dynamic
batch and sequence axes), at opset 14 and 17.

Usage: /usr/bin/python3 gen.py OUTDIR      (make transformer-models)
Needs Debian's python3-torch (1.13) and python3-onnx (1.12).  Same bytes
on every run: weights from torch.manual_seed, export without doc strings
(which would hold source paths), deterministic algorithms on.
"""
import io
import math
import os
import sys
import tempfile

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

HIDDEN = 64
HEADS = 4
VOCAB = 256
SEED = 15
OPSETS = (14, 17)


def init_weights(module):
    """Seeded weights with activations of order one (not the tiny 0.02
    of a fresh Hugging Face model, which makes every softmax uniform)."""
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d)):
            fan_in = m.weight[0].numel()
            nn.init.normal_(m.weight, 0.0, 1.0 / math.sqrt(fan_in))
            if m.bias is not None:
                nn.init.normal_(m.bias, 0.0, 0.1)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, 0.0, 0.5)
        elif isinstance(m, nn.LayerNorm):
            nn.init.normal_(m.weight, 1.0, 0.1)
            nn.init.normal_(m.bias, 0.0, 0.1)
        elif isinstance(m, RMSNorm):
            nn.init.normal_(m.weight, 1.0, 0.1)


def split_heads(x, heads):
    """[B, S, heads * D] -> [B, heads, S, D]"""
    b, s, _ = x.size()
    return x.view(b, s, heads, -1).transpose(1, 2)


def merge_heads(x):
    """[B, H, S, D] -> [B, S, H * D]"""
    b, h, s, d = x.size()
    return x.transpose(1, 2).reshape(b, s, h * d)


def attention(q, k, v, mask):
    """Scaled dot product; @mask additive, broadcast to [B, H, Sq, Sk]."""
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(HIDDEN // HEADS)
    if mask is not None:
        scores = scores + mask
    return torch.matmul(F.softmax(scores, dim=-1), v)


class SelfAttention(nn.Module):
    def __init__(self, bias=True):
        super().__init__()
        self.q = nn.Linear(HIDDEN, HIDDEN, bias=bias)
        self.k = nn.Linear(HIDDEN, HIDDEN, bias=bias)
        self.v = nn.Linear(HIDDEN, HIDDEN, bias=bias)
        self.o = nn.Linear(HIDDEN, HIDDEN, bias=bias)

    def forward(self, x, mask):
        q = split_heads(self.q(x), HEADS)
        k = split_heads(self.k(x), HEADS)
        v = split_heads(self.v(x), HEADS)
        return self.o(merge_heads(attention(q, k, v, mask)))


# --- BERT: post-LN encoder, erf GELU, padding mask, pooler -------------------

class BertLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = SelfAttention()
        self.ln1 = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.up = nn.Linear(HIDDEN, 128)
        self.down = nn.Linear(128, HIDDEN)
        self.ln2 = nn.LayerNorm(HIDDEN, eps=1e-12)

    def forward(self, x, mask):
        x = self.ln1(x + self.attn(x, mask))
        return self.ln2(x + self.down(F.gelu(self.up(x))))


class BertTiny(nn.Module):
    MAX_POS = 512

    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(VOCAB, HIDDEN)
        self.pos = nn.Embedding(self.MAX_POS, HIDDEN)
        self.token_type = nn.Embedding(2, HIDDEN)
        self.ln = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer() for _ in range(2)])
        self.pool = nn.Linear(HIDDEN, HIDDEN)
        self.register_buffer("position_ids", torch.arange(self.MAX_POS).unsqueeze(0))

    def forward(self, input_ids, attention_mask, token_type_ids):
        s = input_ids.size(1)
        x = (self.word(input_ids) + self.pos(self.position_ids[:, :s]) +
             self.token_type(token_type_ids))
        x = self.ln(x)
        # As Hugging Face: 0 -> the most negative float32, added to the scores.
        m = attention_mask[:, None, None, :].to(torch.float32)
        m = (1.0 - m) * torch.finfo(torch.float32).min
        for layer in self.layers:
            x = layer(x, m)
        return x, torch.tanh(self.pool(x[:, 0]))


# --- GPT-2: pre-LN decoder, tanh GELU, causal mask, tied LM head -------------

def gelu_tanh(x):
    """GPT-2's GELU (Hugging Face's NewGELUActivation)."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                       (x + 0.044715 * torch.pow(x, 3.0))))


class Gpt2Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(HIDDEN, eps=1e-5)
        self.attn = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.proj = nn.Linear(HIDDEN, HIDDEN)
        self.ln2 = nn.LayerNorm(HIDDEN, eps=1e-5)
        self.up = nn.Linear(HIDDEN, 4 * HIDDEN)
        self.down = nn.Linear(4 * HIDDEN, HIDDEN)

    def forward(self, x, causal):
        q, k, v = self.attn(self.ln1(x)).split(HIDDEN, dim=2)
        q, k, v = (split_heads(t, HEADS) for t in (q, k, v))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(HIDDEN // HEADS)
        # As Hugging Face's GPT-2: a constant lower-triangular table, sliced
        # to the sequence, selects between the score and the mask value.
        scores = torch.where(causal, scores,
                             torch.full([], torch.finfo(torch.float32).min))
        a = torch.matmul(F.softmax(scores, dim=-1), v)
        x = x + self.proj(merge_heads(a))
        return x + self.down(gelu_tanh(self.up(self.ln2(x))))


class Gpt2Tiny(nn.Module):
    MAX_POS = 128

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, HIDDEN)
        self.wpe = nn.Embedding(self.MAX_POS, HIDDEN)
        self.layers = nn.ModuleList([Gpt2Layer() for _ in range(2)])
        self.ln_f = nn.LayerNorm(HIDDEN, eps=1e-5)
        # uint8, cast to bool after slicing, as older Hugging Face GPT-2
        # code did (newer code stores bool, and libnpu's parser refuses a
        # BOOL initializer today).
        self.register_buffer("bias", torch.tril(torch.ones(
            self.MAX_POS, self.MAX_POS, dtype=torch.uint8)).view(1, 1, self.MAX_POS, self.MAX_POS))

    def forward(self, input_ids):
        s = input_ids.size(1)
        pos = torch.arange(0, s, dtype=torch.long).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        causal = self.bias[:, :, :s, :s].to(torch.bool)
        for layer in self.layers:
            x = layer(x, causal)
        # Tied LM head: the token embedding table, transposed.
        return F.linear(self.ln_f(x), self.wte.weight)


# --- LLaMA: RMSNorm, rotary, grouped-query attention, SwiGLU, no biases ------

class RMSNorm(nn.Module):
    def __init__(self, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(HIDDEN))
        self.eps = eps

    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


def rotate_half(x):
    h = x.size(-1) // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def repeat_kv(x, n_rep):
    """Hugging Face's repeat_kv: [B, KV, S, D] -> [B, KV * n_rep, S, D] by
    expanding a new axis and reshaping (repeat_interleave on a dynamic
    shape exports a graph onnxruntime rejects)."""
    b, kv, s, d = x.shape
    x = x[:, :, None, :, :].expand(b, kv, n_rep, s, d)
    return x.reshape(b, kv * n_rep, s, d)


class LlamaLayer(nn.Module):
    KV_HEADS = 2

    def __init__(self):
        super().__init__()
        d = HIDDEN // HEADS
        self.norm1 = RMSNorm()
        self.q = nn.Linear(HIDDEN, HEADS * d, bias=False)
        self.k = nn.Linear(HIDDEN, self.KV_HEADS * d, bias=False)
        self.v = nn.Linear(HIDDEN, self.KV_HEADS * d, bias=False)
        self.o = nn.Linear(HEADS * d, HIDDEN, bias=False)
        self.norm2 = RMSNorm()
        self.gate = nn.Linear(HIDDEN, 128, bias=False)
        self.up = nn.Linear(HIDDEN, 128, bias=False)
        self.down = nn.Linear(128, HIDDEN, bias=False)

    def forward(self, x, cos, sin, mask):
        h = self.norm1(x)
        q = split_heads(self.q(h), HEADS)
        k = split_heads(self.k(h), self.KV_HEADS)
        v = split_heads(self.v(h), self.KV_HEADS)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        n_rep = HEADS // self.KV_HEADS
        a = attention(q, repeat_kv(k, n_rep), repeat_kv(v, n_rep), mask)
        x = x + self.o(merge_heads(a))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class LlamaTiny(nn.Module):
    MAX_POS = 128

    def __init__(self):
        super().__init__()
        d = HIDDEN // HEADS
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
        freqs = torch.outer(torch.arange(self.MAX_POS, dtype=torch.float32), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos())
        self.register_buffer("sin_cached", emb.sin())
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.ModuleList([LlamaLayer() for _ in range(2)])
        self.norm = RMSNorm()
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, input_ids):
        s = input_ids.size(1)
        # Rotary tables sliced to the sequence (positions 0..s-1).
        cos = self.cos_cached[:s]
        sin = self.sin_cached[:s]
        # Causal mask from a run-time comparison of positions.
        i = torch.arange(s)
        mask = torch.zeros(s, s).masked_fill(i[None, :] > i[:, None],
                                             torch.finfo(torch.float32).min)
        x = self.embed(input_ids)
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        return self.lm_head(self.norm(x))


# --- Decoders with past (issue 16): the KV cache as inputs and outputs -------
#
# As optimum's "decoder with past" exports: input_ids [batch, sequence],
# attention_mask [batch, past_sequence + sequence], position_ids [batch,
# sequence] and past_key_values.N.key/value [batch, kv_heads,
# past_sequence, head_dim] in; logits and present.N.key/value = Concat(past,
# new) on axis 2 out.  Same modules and parameter order as the models
# above, so under the same seed the weights are the same.

def padding_mask(attention_mask):
    """[B, T] int64 (1 keep, 0 pad) -> [B, 1, 1, T] bool, True where padded."""
    return attention_mask[:, None, None, :] == 0


class Gpt2PastLayer(Gpt2Layer):
    def forward(self, x, causal, pad, past_k, past_v):
        q, k, v = self.attn(self.ln1(x)).split(HIDDEN, dim=2)
        q, k, v = (split_heads(t, HEADS) for t in (q, k, v))
        k = torch.cat((past_k, k), dim=2)
        v = torch.cat((past_v, v), dim=2)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(HIDDEN // HEADS)
        # Hugging Face's GPT-2: the causal table selects between the score
        # and the mask value; the padding mask is added.  Added before the
        # Where (not after, as Hugging Face does) so that a padded and
        # causally hidden score is min, not min + min = -inf: a fully
        # masked row stays finite (uniform), never NaN.
        scores = torch.where(causal, scores + pad,
                             torch.full([], torch.finfo(torch.float32).min))
        a = torch.matmul(F.softmax(scores, dim=-1), v)
        x = x + self.proj(merge_heads(a))
        return x + self.down(gelu_tanh(self.up(self.ln2(x)))), k, v


class Gpt2Past(Gpt2Tiny):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Gpt2PastLayer() for _ in range(2)])

    def forward(self, input_ids, attention_mask, position_ids, *past):
        s = input_ids.size(1)
        t = attention_mask.size(1)
        x = self.wte(input_ids) + self.wpe(position_ids)
        # Query i is at absolute position t - s + i: the rows t - s .. t - 1
        # of the table, its first t columns.
        causal = self.bias[:, :, t - s:t, :t].to(torch.bool)
        pad = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * \
            torch.finfo(torch.float32).min
        present = []
        for n, layer in enumerate(self.layers):
            x, k, v = layer(x, causal, pad, past[2 * n], past[2 * n + 1])
            present += [k, v]
        return (F.linear(self.ln_f(x), self.wte.weight), *present)


class LlamaPastLayer(LlamaLayer):
    def forward(self, x, cos, sin, mask, past_k, past_v):
        h = self.norm1(x)
        q = split_heads(self.q(h), HEADS)
        k = split_heads(self.k(h), self.KV_HEADS)
        v = split_heads(self.v(h), self.KV_HEADS)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        # The cache holds the KV heads after rotary, before repeat_kv.
        k = torch.cat((past_k, k), dim=2)
        v = torch.cat((past_v, v), dim=2)
        n_rep = HEADS // self.KV_HEADS
        a = attention(q, repeat_kv(k, n_rep), repeat_kv(v, n_rep), mask)
        x = x + self.o(merge_heads(a))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h)), k, v


class LlamaPast(LlamaTiny):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([LlamaPastLayer() for _ in range(2)])

    def forward(self, input_ids, attention_mask, position_ids, *past):
        s = input_ids.size(1)
        t = attention_mask.size(1)
        # Rotary tables gathered by position: [B, 1, S, D].
        cos = self.cos_cached[position_ids].unsqueeze(1)
        sin = self.sin_cached[position_ids].unsqueeze(1)
        # Hugging Face's 4-D mask: causal relative to the past length
        # (query i at t - s + i sees keys j <= t - s + i), then the padded
        # keys filled with min (filled, not added: no -inf, no NaN).
        i = torch.arange(s)[:, None] + (t - s)
        j = torch.arange(t)[None, :]
        mask = torch.zeros(s, t).masked_fill(j > i, torch.finfo(torch.float32).min)
        mask = mask[None, None, :, :].masked_fill(padding_mask(attention_mask),
                                                  torch.finfo(torch.float32).min)
        x = self.embed(input_ids)
        present = []
        for n, layer in enumerate(self.layers):
            x, k, v = layer(x, cos, sin, mask, past[2 * n], past[2 * n + 1])
            present += [k, v]
        return (self.lm_head(self.norm(x)), *present)


# --- ViT: patch-embedding Conv, class token, pre-LN encoder, head ------------

class VitLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.attn = SelfAttention()
        self.ln2 = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.up = nn.Linear(HIDDEN, 128)
        self.down = nn.Linear(128, HIDDEN)

    def forward(self, x):
        x = x + self.attn(self.ln1(x), None)
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class VitTiny(nn.Module):
    IMAGE, PATCH, CLASSES = 32, 8, 10

    def __init__(self):
        super().__init__()
        n = (self.IMAGE // self.PATCH) ** 2
        self.patch = nn.Conv2d(3, HIDDEN, self.PATCH, stride=self.PATCH)
        self.cls = nn.Parameter(torch.randn(1, 1, HIDDEN) * 0.5)
        self.pos = nn.Parameter(torch.randn(1, n + 1, HIDDEN) * 0.5)
        self.layers = nn.ModuleList([VitLayer() for _ in range(2)])
        self.ln = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.head = nn.Linear(HIDDEN, self.CLASSES)

    def forward(self, pixel_values):
        x = self.patch(pixel_values).flatten(2).transpose(1, 2)
        cls = self.cls.expand(x.size(0), -1, -1)
        x = torch.cat((cls, x), dim=1) + self.pos
        for layer in self.layers:
            x = layer(x)
        return self.head(self.ln(x)[:, 0])


BS = {0: "batch", 1: "sequence"}
TOTAL = "past_sequence + sequence"
PAST_LAYERS = 2


def past_io(kv_heads):
    """Example inputs, names and dynamic axes of a decoder with past:
    batch 2, sequence 3 after a past of 5 (none of the sizes equal, so the
    tracer keeps every axis apart)."""
    b, s, p, d = 2, 3, 5, HIDDEN // HEADS

    def example():
        ids = torch.randint(0, VOCAB, (b, s))
        mask = torch.ones(b, p + s, dtype=torch.long)
        pos = torch.arange(p, p + s).unsqueeze(0).expand(b, s)
        past = [torch.randn(b, kv_heads, p, d) for _ in range(2 * PAST_LAYERS)]
        return (ids, mask, pos, *past)
    kv = ["%s.%d.%s" % (io, n, t) for io in ("past_key_values", "present")
          for n in range(PAST_LAYERS) for t in ("key", "value")]
    inames = ["input_ids", "attention_mask", "position_ids"] + kv[:2 * PAST_LAYERS]
    onames = ["logits"] + kv[2 * PAST_LAYERS:]
    axes = {"input_ids": BS, "attention_mask": {0: "batch", 1: TOTAL},
            "position_ids": BS, "logits": BS}
    for name in kv[:2 * PAST_LAYERS]:
        axes[name] = {0: "batch", 2: "past_sequence"}
    for name in kv[2 * PAST_LAYERS:]:
        axes[name] = {0: "batch", 2: TOTAL}
    return example, inames, onames, axes


MODELS = {
    # name: (class, example inputs, input names, output names, dynamic axes)
    "bert_tiny": (BertTiny,
                  lambda: (torch.randint(0, VOCAB, (2, 8)), torch.ones(2, 8, dtype=torch.long),
                           torch.zeros(2, 8, dtype=torch.long)),
                  ["input_ids", "attention_mask", "token_type_ids"],
                  ["last_hidden_state", "pooler_output"],
                  {"input_ids": BS, "attention_mask": BS, "token_type_ids": BS,
                   "last_hidden_state": BS, "pooler_output": {0: "batch"}}),
    "gpt2_tiny": (Gpt2Tiny, lambda: (torch.randint(0, VOCAB, (2, 8)),),
                  ["input_ids"], ["logits"], {"input_ids": BS, "logits": BS}),
    "llama_tiny": (LlamaTiny, lambda: (torch.randint(0, VOCAB, (2, 8)),),
                   ["input_ids"], ["logits"], {"input_ids": BS, "logits": BS}),
    "vit_tiny": (VitTiny, lambda: (torch.randn(2, 3, 32, 32),),
                 ["pixel_values"], ["logits"],
                 {"pixel_values": {0: "batch"}, "logits": {0: "batch"}}),
    "gpt2_past": (Gpt2Past, *past_io(HEADS)),
    "llama_past": (LlamaPast, *past_io(LlamaLayer.KV_HEADS)),
}


def export(name, opset):
    cls, example, inames, onames, axes = MODELS[name]
    torch.manual_seed(SEED)
    model = cls()
    init_weights(model)
    model.eval()
    args = example()
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(model, args, buf, input_names=inames, output_names=onames,
                          dynamic_axes=axes, opset_version=opset,
                          do_constant_folding=True, verbose=False)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto)
    return buf.getvalue(), proto


# The decoders with past at opset 17 only; at 14 they would differ only in
# GPT-2's LayerNorm, which the tiny models cover.
PAST_OPSETS = (17,)
# One model again with every initializer in an external data side file
# (issue 16's external data support): (model, opset, file name, side file).
EXTERNAL = ("llama_past", 17, "llama_past_ext_op17.onnx", "llama_past_ext.onnx.data")


def write(path, data):
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)


def report(path, size, proto):
    ops = sorted({n.op_type for n in proto.graph.node})
    print("%-26s %7d bytes, %3d nodes: %s" %
          (os.path.basename(path), size, len(proto.graph.node), " ".join(ops)))


def write_external(out, proto, name, side):
    """@proto saved as @name with its initializers in @side (all of them:
    size_threshold 0), through a scratch folder: onnx appends to a side
    file that exists, so each run starts from none."""
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        onnx.save(proto, os.path.join(tmp, name), save_as_external_data=True,
                  all_tensors_to_one_file=True, location=side, size_threshold=0)
        onnx.checker.check_model(os.path.join(tmp, name))
        for f in (name, side):
            os.replace(os.path.join(tmp, f), os.path.join(out, f))
    print("%-26s %7d bytes + %s %d bytes" %
          (name, os.path.getsize(os.path.join(out, name)), side,
           os.path.getsize(os.path.join(out, side))))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen.py OUTDIR")
    out = sys.argv[1]
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    print("torch %s, onnx %s" % (torch.__version__, onnx.__version__))
    for name in MODELS:
        for opset in PAST_OPSETS if name.endswith("_past") else OPSETS:
            data, proto = export(name, opset)
            path = os.path.join(out, "%s_op%d.onnx" % (name, opset))
            write(path, data)
            report(path, len(data), proto)
            if (name, opset) == EXTERNAL[:2]:
                write_external(out, proto, *EXTERNAL[2:])


if __name__ == "__main__":
    main()
