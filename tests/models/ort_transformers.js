// SPDX-License-Identifier: MIT
// The committed transformer test models (tests/models/transformers) in
// onnxruntime-node, on deterministic inputs: each loads and runs at batch 1
// and 2, sequence 16 (BERT also at 512), outputs finite and of the expected
// shapes, and what each model claims holds: BERT's padding mask hides the
// padded tokens, GPT-2's and LLaMA's causal masks hide later tokens, a
// batch of two gives the first element's single run.  With OUTDIR, each
// run's inputs and outputs are written there (raw, little endian) as
// references for libnpu.
// Usage: node ort_transformers.js MODELDIR [OUTDIR]
// Prints "N passed, N failed".
const path = require('path');
const fs = require('fs');
const { ort, check, lcg, write, run } = require('./ort_common.js');

const VOCAB = 256;

function tokens(b, s, seed) {
  const r = lcg(seed), a = new BigInt64Array(b * s);
  for (let i = 0; i < a.length; i++) a[i] = BigInt(r() % VOCAB);
  return a;
}
function i64(a, dims) { return new ort.Tensor('int64', a, dims); }

// BERT: element e of the batch keeps its first s - 3 (e + 1) tokens (at
// least one); token types 0 then 1 from the middle.
function bertFeeds(b, s, seed) {
  const mask = new BigInt64Array(b * s), types = new BigInt64Array(b * s);
  for (let e = 0; e < b; e++) {
    const keep = Math.max(1, s - 3 * (e + 1));
    for (let i = 0; i < s; i++) {
      mask[e * s + i] = i < keep ? 1n : 0n;
      types[e * s + i] = i >= keep / 2 && i < keep ? 1n : 0n;
    }
  }
  return { input_ids: i64(tokens(b, s, seed), [b, s]), attention_mask: i64(mask, [b, s]),
           token_type_ids: i64(types, [b, s]) };
}
function idFeeds(b, s, seed) { return { input_ids: i64(tokens(b, s, seed), [b, s]) }; }
function imageFeeds(b, seed) {
  const r = lcg(seed), x = new Float32Array(b * 3 * 32 * 32);
  for (let i = 0; i < x.length; i++) x[i] = r() / 32768 - 1;
  return { pixel_values: new ort.Tensor('float32', x, [b, 3, 32, 32]) };
}

// The same feeds with element 0 only.
function first(feeds) {
  const out = {};
  for (const [k, t] of Object.entries(feeds)) {
    const n = t.data.length / t.dims[0];
    out[k] = new ort.Tensor(t.type, t.data.slice(0, n), [1, ...t.dims.slice(1)]);
  }
  return out;
}
// A copy of @feeds' input_ids with the tokens where pick(e, i) changed.
function retoken(feeds, pick) {
  const t = feeds.input_ids, [b, s] = t.dims, a = t.data.slice();
  for (let e = 0; e < b; e++)
    for (let i = 0; i < s; i++)
      if (pick(e, i)) a[e * s + i] = (a[e * s + i] + 17n) % BigInt(VOCAB);
  return Object.assign({}, feeds, { input_ids: i64(a, [b, s]) });
}
// Largest |x - y| over the rows (axis 1 of [B, S, ...]) where keep(e, i).
function maxDiff(x, y, keep) {
  const [b, s] = x.dims, w = x.data.length / (b * s);
  let m = 0;
  for (let e = 0; e < b; e++)
    for (let i = 0; i < s; i++)
      if (keep(e, i))
        for (let j = 0; j < w; j++)
          m = Math.max(m, Math.abs(x.data[(e * s + i) * w + j] - y.data[(e * s + i) * w + j]));
  return m;
}
function maxDiffPrefix(x, y) {
  let m = 0;
  for (let i = 0; i < y.data.length; i++) m = Math.max(m, Math.abs(x.data[i] - y.data[i]));
  return m;
}

const TOL = 1e-5;
const MODELS = {
  bert_tiny: {
    cases: [[1, 16], [2, 16], [1, 512]], feeds: bertFeeds,
    shapes: (b, s) => ({ last_hidden_state: [b, s, 64], pooler_output: [b, 64] }),
    // Padded tokens changed: the kept positions' outputs do not move.
    claim: async (sess, feeds, out) => {
      const m = feeds.attention_mask.data, s = feeds.input_ids.dims[1];
      const kept = (e, i) => m[e * s + i] === 1n;
      const o2 = await sess.run(retoken(feeds, (e, i) => !kept(e, i)));
      return ['padding mask hides padded tokens',
              maxDiff(out.last_hidden_state, o2.last_hidden_state, kept)];
    },
  },
  gpt2_tiny: { cases: [[1, 16], [2, 16]], feeds: idFeeds,
               shapes: (b, s) => ({ logits: [b, s, VOCAB] }) },
  llama_tiny: { cases: [[1, 16], [2, 16]], feeds: idFeeds,
                shapes: (b, s) => ({ logits: [b, s, VOCAB] }) },
  vit_tiny: { cases: [[1, 0], [2, 0]], feeds: (b, s, seed) => imageFeeds(b, seed),
              shapes: (b) => ({ logits: [b, 10] }) },
};
// Decoders: the last token changed, the earlier positions' logits do not move.
for (const k of ['gpt2_tiny', 'llama_tiny'])
  MODELS[k].claim = async (sess, feeds, out) => {
    const s = feeds.input_ids.dims[1];
    const o2 = await sess.run(retoken(feeds, (e, i) => i === s - 1));
    return ['causal mask hides later tokens', maxDiff(out.logits, o2.logits, (e, i) => i < s - 1)];
  };

run(async () => {
  const dir = process.argv[2], outdir = process.argv[3];
  // The decoders with past (*_past_*) are ort_generate.js's.
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.onnx') && !/_past_/.test(f)).sort();
  if (!files.length) throw new Error('no .onnx files in ' + dir);
  for (const f of files) {
    const name = f.replace(/_op\d+\.onnx$/, ''), m = MODELS[name];
    let sess;
    try {
      sess = await ort.InferenceSession.create(path.join(dir, f),
        { intraOpNumThreads: 1, logSeverityLevel: 3 });
      check(!!m, f + ': loads', 'not a model gen.py makes');
    } catch (e) {
      check(false, f + ': loads', e.message);
      continue;
    }
    if (!m) continue;
    for (const [b, s] of m.cases) {
      const tag = f + ' batch ' + b + (s ? ' sequence ' + s : '');
      const feeds = m.feeds(b, s, 1 + s + b);
      let out;
      try {
        out = await sess.run(feeds);
      } catch (e) {
        check(false, tag + ': runs', e.message);
        continue;
      }
      const want = m.shapes(b, s);
      let bad = '';
      for (const [k, dims] of Object.entries(want)) {
        const t = out[k];
        if (!t) { bad = 'no output ' + k; break; }
        if (t.dims.join('x') !== dims.join('x')) {
          bad = k + ' is ' + t.dims.join('x') + ', not ' + dims.join('x');
          break;
        }
        const i = t.data.findIndex((v) => !Number.isFinite(v));
        if (i >= 0) { bad = k + '[' + i + '] is ' + t.data[i]; break; }
      }
      check(!bad, tag + ': outputs finite, shapes ' +
            Object.values(want).map((d) => d.join('x')).join(' '), bad);
      if (bad) continue;
      if (m.claim) {
        const [what, d] = await m.claim(sess, feeds, out);
        check(d <= TOL, tag + ': ' + what, 'max difference ' + d);
      }
      if (b === 2) {
        const o1 = await sess.run(first(feeds));
        let d = 0;
        for (const k of Object.keys(want)) d = Math.max(d, maxDiffPrefix(out[k], o1[k]));
        check(d <= TOL, tag + ': element 0 as in a batch of 1', 'max difference ' + d);
      }
      if (outdir) {
        const sub = path.join(outdir, f.replace(/\.onnx$/, '') + '_b' + b + (s ? '_s' + s : ''));
        fs.mkdirSync(sub, { recursive: true });
        for (const [k, t] of Object.entries(feeds)) write(sub, 'in_' + k, t);
        for (const k of Object.keys(want)) write(sub, k, out[k]);
      }
    }
  }
}, 'ort_transformers');
