// SPDX-License-Identifier: MIT
// The recurrent test models (tests/models/recurrent, gen.py) in
// onnxruntime-node over FRAMES frames of 16 steps, the state (hn, cn) of
// each frame fed as the next frame's h0, c0, as a streaming speech
// application runs them.  Frame k's x is deterministic (the LCG of
// model_test.c); the states start at zero.  Writes, per model and frame,
// OUTDIR/<model>/f<k>/in_x.bin and every output (raw float32, little
// endian): the references npu_run_recurrent.sh compares against while
// libnpu carries its own state.  The single nodes of gen_nodes.py run once
// on a deterministic X [5, 2, 3]: OUTDIR/<model>/in_X.bin and the outputs.
// Usage: node ort_recurrent.js MODELDIR OUTDIR
// Prints "N passed, N failed".
const path = require('path');
const fs = require('fs');
const { ort, check, lcg, write, run } = require('./ort_common.js');

const FRAMES = 4, STEPS = 16, FEATURES = 13;
const MODELS = {
  lstm_frames: { states: { h0: 'hn', c0: 'cn' }, dims: [2, 1, 48] },
  gru_frames: { states: { h0: 'hn' }, dims: [2, 1, 32] },
};
const NODE_MODELS = ['node_lstm_clip', 'node_gru_acts', 'node_rnn_acts'];

async function main() {
  const [modelDir, outDir] = process.argv.slice(2);
  for (const [name, m] of Object.entries(MODELS)) {
    const sess = await ort.InferenceSession.create(path.join(modelDir, name + '.onnx'));
    const n = m.dims.reduce((a, b) => a * b, 1);
    const state = {};
    for (const s of Object.keys(m.states))
      state[s] = new ort.Tensor('float32', new Float32Array(n), m.dims);
    for (let k = 0; k < FRAMES; k++) {
      const r = lcg(1000 + k), x = new Float32Array(STEPS * FEATURES);
      for (let i = 0; i < x.length; i++) x[i] = r() / 32768 - 1;
      const xt = new ort.Tensor('float32', x, [1, STEPS, FEATURES]);
      const out = await sess.run({ x: xt, ...state });
      const dir = path.join(outDir, name, 'f' + k);
      fs.mkdirSync(dir, { recursive: true });
      write(dir, 'in_x', xt);
      let finite = true;
      for (const [o, t] of Object.entries(out)) {
        write(dir, o, t);
        finite = finite && t.data.every(Number.isFinite);
      }
      check(finite && out.logits.dims.join() === [1, STEPS, 10].join(),
            `${name} frame ${k}: finite logits [1, 16, 10]`, out.logits.dims.join());
      for (const [s, o] of Object.entries(m.states)) state[s] = out[o];
    }
  }
  for (const name of NODE_MODELS) {
    const sess = await ort.InferenceSession.create(path.join(modelDir, name + '.onnx'));
    const r = lcg(7), x = new Float32Array(5 * 2 * 3);
    for (let i = 0; i < x.length; i++) x[i] = 4 * (r() / 65536 - 0.5);
    const xt = new ort.Tensor('float32', x, [5, 2, 3]);
    const out = await sess.run({ X: xt });
    const dir = path.join(outDir, name);
    fs.mkdirSync(dir, { recursive: true });
    write(dir, 'in_X', xt);
    let finite = true;
    for (const [o, t] of Object.entries(out)) {
      write(dir, o, t);
      finite = finite && t.data.every(Number.isFinite);
    }
    check(finite, `${name}: finite outputs`, '');
  }
}
run(main);
