// SPDX-License-Identifier: MIT
// Greedy generation with the decoders exported with past
// (tests/models/transformers/*_past_*.onnx) in onnxruntime-node, driven step
// by step with its own KV cache as an application does: the first step runs
// the whole prompt with an empty past (past_sequence 0), then each step feeds
// the one token chosen last (ArgMax of the last logits row, the first index
// on a tie), attention_mask all ones of length past + 1, position_ids = past
// length, and the previous step's present.N.key/value as
// past_key_values.N.key/value.  32 tokens for each of two fixed prompts.
//
// It checks itself: the cache shapes grow by one position per step, logits
// are finite, and for the first 8 steps the ids and logits equal those of
// re-running the whole sequence without past (full recompute, the last row),
// which proves the exported cache semantics right.  Both prompts as a batch
// of two, the short one left-padded (mask 0, as Hugging Face pads for
// generation), give each prompt's own ids and logits for 8 steps, with no
// NaN from the padded queries' fully masked rows.  The external-data copy
// of a model (*_ext_*) must give the same ids and logits bit for bit as the
// model it copies.
//
// With OUTDIR, per model and prompt (NAME = <model file without .onnx>_p<prompt
// length>): NAME.json {"model", "prompt", "generated", "margin" (per step, the
// top logit minus the next), "steps", "vocab"} and
// NAME.logits.f32: each step's last logits row, float32 little endian, step
// after step (steps x vocab), as the reference for libnpu's generation.
// Usage: node ort_generate.js MODELDIR|MODEL.onnx [OUTDIR]
// (a folder: its *_past_*.onnx files; the cache's heads and head dim are
// read from the model's past_key_values.0.key).
// Prints "N passed, N failed".
const path = require('path');
const fs = require('fs');
const cache = process.env.NPU_CACHE || path.join(process.env.HOME, '.cache', 'npu');
const ort = require(path.join(cache, 'ort', 'node_modules', 'onnxruntime-node'));

const STEPS = 32;        // tokens generated per prompt
const RECOMPUTE = 8;     // steps checked against a full recompute
const TOL = 1e-4;
const PROMPTS = [
  Array.from({ length: 11 }, (_, i) => i + 1),
  [200, 17, 42, 99, 3],
];

let passed = 0, failed = 0;
function check(ok, what, detail) {
  if (ok) { passed++; console.log('ok - ' + what); }
  else { failed++; console.log('not ok - ' + what + ': ' + detail); }
}

function i64(values, dims) {
  return new ort.Tensor('int64', BigInt64Array.from(values, (v) => BigInt(v)), dims);
}
function range(a, b) { return Array.from({ length: b - a }, (_, i) => a + i); }
function argmax(row) {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
}
// The last position's row of logits [1, S, V].
function lastRow(logits) {
  const [, s, v] = logits.dims;
  return logits.data.slice((s - 1) * v, s * v);
}
function maxDiff(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

// The cache's KV heads and head dim, from the first past input's
// [batch, heads, past_sequence, head_dim]; null if it has none.
function cacheDims(sess) {
  const m = (sess.inputMetadata || []).find((x) => x.name === 'past_key_values.0.key');
  if (!m || m.shape.length !== 4 || typeof m.shape[1] !== 'number' ||
      typeof m.shape[3] !== 'number')
    return null;
  return { heads: m.shape[1], dim: m.shape[3] };
}

// Feeds for @ids after a cache of @past positions (@kv: the past tensors by
// input name, or null for an empty past of @heads heads).
function feeds(sess, ids, past, kv, heads) {
  const f = {
    input_ids: i64(ids, [1, ids.length]),
    attention_mask: i64(new Array(past + ids.length).fill(1), [1, past + ids.length]),
    position_ids: i64(range(past, past + ids.length), [1, ids.length]),
  };
  for (const name of sess.inputNames.filter((n) => n.startsWith('past_key_values.')))
    f[name] = kv ? kv[name] : new ort.Tensor('float32', new Float32Array(0), [1, heads, 0, sess.headDim]);
  return f;
}

// Greedy generation from @prompt: { ids, rows } or throws.
async function generate(sess, tag, prompt, heads) {
  const ids = [], rows = [];
  let kv = null, past = 0, input = prompt;
  for (let step = 0; step < STEPS; step++) {
    const out = await sess.run(feeds(sess, input, past, kv, heads));
    const row = lastRow(out.logits);
    const bad = row.findIndex((x) => !Number.isFinite(x));
    if (bad >= 0) throw new Error('step ' + step + ': logits[' + bad + '] is ' + row[bad]);
    past += input.length;
    kv = {};
    for (const name of sess.outputNames.filter((n) => n.startsWith('present.'))) {
      const t = out[name], want = [1, heads, past, sess.headDim].join('x');
      if (t.dims.join('x') !== want)
        throw new Error('step ' + step + ': ' + name + ' is ' + t.dims.join('x') + ', not ' + want);
      kv[name.replace('present.', 'past_key_values.')] = t;
    }
    rows.push(row);
    ids.push(argmax(row));
    input = [ids[ids.length - 1]];
  }
  return { ids, rows };
}

const sessions = {};
async function batchCheck(f, single) {
  const sess = sessions[f], heads = sess.kvHeads;
  const b = PROMPTS.length, width = Math.max(...PROMPTS.map((p) => p.length));
  const ids = [], mask = [], pos = [];
  for (const p of PROMPTS) {
    const pad = width - p.length;
    ids.push(...new Array(pad).fill(0), ...p);
    mask.push(...new Array(pad).fill(0), ...new Array(p.length).fill(1));
    pos.push(...new Array(pad).fill(0), ...range(0, p.length));
  }
  const steps = RECOMPUTE;
  let kv = null, past = 0, len = width, d = 0, idBad = '', nan = '';
  let bfeeds = { input_ids: i64(ids, [b, width]), attention_mask: i64(mask, [b, width]),
                 position_ids: i64(pos, [b, width]) };
  for (let step = 0; step < steps; step++) {
    for (const name of sess.inputNames.filter((n) => n.startsWith('past_key_values.')))
      bfeeds[name] = kv ? kv[name] : new ort.Tensor('float32', new Float32Array(0), [b, heads, 0, sess.headDim]);
    const out = await sess.run(bfeeds);
    const [, s, v] = out.logits.dims;
    const i = out.logits.data.findIndex((x) => !Number.isFinite(x));
    if (i >= 0 && !nan) nan = 'step ' + step + ': logits[' + i + '] is ' + out.logits.data[i];
    const next = [];
    for (let e = 0; e < b; e++) {
      const row = out.logits.data.slice((e * s + s - 1) * v, (e * s + s) * v);
      d = Math.max(d, maxDiff(row, single[e].rows[step]));
      next.push(argmax(row));
      if (!idBad && next[e] !== single[e].ids[step])
        idBad = 'step ' + step + ' element ' + e + ': ' + next[e] + ', alone ' + single[e].ids[step];
    }
    kv = {};
    for (const name of sess.outputNames.filter((n) => n.startsWith('present.')))
      kv[name.replace('present.', 'past_key_values.')] = out[name];
    past += s;
    len = past + 1;
    // The masks grow by a kept column; positions continue each element's
    // count of kept tokens.
    const m2 = [];
    for (let e = 0; e < b; e++) {
      const pad = width - PROMPTS[e].length;
      m2.push(...new Array(pad).fill(0), ...new Array(len - pad).fill(1));
    }
    bfeeds = { input_ids: i64(next, [b, 1]), attention_mask: i64(m2, [b, len]),
               position_ids: i64(PROMPTS.map((p) => p.length + step), [b, 1]) };
  }
  const tag = f + ' batch of both prompts, left-padded';
  check(!nan, tag + ': logits finite (fully masked rows give no NaN)', nan);
  check(!idBad, tag + ': first ' + steps + ' ids those of each prompt alone', idBad);
  check(d <= TOL, tag + ': logits within ' + TOL + ' of each prompt alone (' + d.toExponential(2) + ')',
        'max difference ' + d);
}

function save(outdir, name, prompt, gen, vocab, model) {
  // Each step's top logit minus the runner-up: a device whose logits are
  // off by more than that at a step may rightly pick another id there.
  const margin = gen.rows.map((r) => {
    const top = r[argmax(r)];
    return Math.fround(top - Math.max(...r.filter((x, i) => i !== argmax(r))));
  });
  fs.writeFileSync(path.join(outdir, name + '.json'), JSON.stringify(
    { model, prompt, generated: gen.ids, margin, steps: STEPS, vocab }) + '\n');
  const all = new Float32Array(STEPS * vocab);
  gen.rows.forEach((r, k) => all.set(r, k * vocab));
  fs.writeFileSync(path.join(outdir, name + '.logits.f32'), Buffer.from(all.buffer));
}

(async () => {
  const arg = process.argv[2], outdir = process.argv[3];
  let dir = arg, files;
  if (arg.endsWith('.onnx')) {
    dir = path.dirname(arg);
    files = [path.basename(arg)];
  } else {
    files = fs.readdirSync(dir).filter((f) => /_past_.*\.onnx$/.test(f)).sort();
    if (!files.length) throw new Error('no *_past_*.onnx files in ' + dir);
  }
  if (outdir) fs.mkdirSync(outdir, { recursive: true });
  const results = {};     // file -> prompt index -> { ids, rows }
  for (const f of files) {
    let sess, dims;
    try {
      sess = await ort.InferenceSession.create(path.join(dir, f),
        { intraOpNumThreads: 1, logSeverityLevel: 3 });
      dims = cacheDims(sess);
      check(!!dims, f + ': loads, a decoder with past', 'no past_key_values.0.key [batch, heads, past, dim]');
    } catch (e) {
      check(false, f + ': loads', e.message);
      continue;
    }
    if (!dims) continue;
    const heads = dims.heads;
    sess.kvHeads = heads;
    sess.headDim = dims.dim;
    results[f] = [];
    sessions[f] = sess;
    for (const prompt of PROMPTS) {
      const tag = f + ' prompt of ' + prompt.length;
      let gen;
      try {
        gen = await generate(sess, tag, prompt, heads);
        check(true, tag + ': ' + STEPS + ' greedy steps with the cache (empty past first), ' +
              'logits finite, present grows by one position a step', '');
      } catch (e) {
        check(false, tag + ': greedy steps with the cache', e.message);
        continue;
      }
      results[f].push(gen);
      console.log('# ' + tag + ': ' + gen.ids.join(','));
      // Full recompute of prompt + generated[0..k-1], no past.
      let idBad = '', d = 0;
      for (let k = 0; k < RECOMPUTE; k++) {
        const seq = prompt.concat(gen.ids.slice(0, k));
        const out = await sess.run(feeds(sess, seq, 0, null, heads));
        const row = lastRow(out.logits);
        d = Math.max(d, maxDiff(row, gen.rows[k]));
        if (!idBad && argmax(row) !== gen.ids[k])
          idBad = 'step ' + k + ': ' + argmax(row) + ' without past, ' + gen.ids[k] + ' with';
      }
      check(!idBad, tag + ': first ' + RECOMPUTE + ' ids equal a full recompute without past', idBad);
      check(d <= TOL, tag + ': first ' + RECOMPUTE + ' logits rows within ' + TOL +
            ' of a full recompute (' + d.toExponential(2) + ')', 'max difference ' + d);
      if (outdir)
        save(outdir, f.replace(/\.onnx$/, '') + '_p' + prompt.length, prompt, gen,
             gen.rows[0].length, f);
    }
  }
  // A batch of both prompts, the short one left-padded as Hugging Face pads
  // for generation (mask 0, position_ids counting kept tokens only): the
  // padded queries see no key at all (rows of float32 min, which must give
  // no NaN), and each element's ids and logits are those of its own run.
  for (const f of Object.keys(results)) {
    const tag = f + ' batch of both prompts, left-padded';
    try {
      await batchCheck(f, results[f]);
    } catch (e) {
      check(false, tag, e.message);
    }
  }
  // An external-data copy gives what the model it copies gives, bit for bit.
  for (const f of Object.keys(results).filter((n) => /_ext_/.test(n))) {
    const base = f.replace('_ext_', '_');
    if (!results[base]) { check(false, f + ': same as ' + base, base + ' did not run'); continue; }
    const same = results[f].length === results[base].length && results[f].every((g, p) =>
      g.ids.join() === results[base][p].ids.join() &&
      g.rows.every((r, k) => maxDiff(r, results[base][p].rows[k]) === 0));
    check(same, f + ': ids and logits bit for bit those of ' + base, 'they differ');
  }
  console.log(passed + ' passed, ' + failed + ' failed');
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.error('ort_generate:', e.message); process.exit(1); });
