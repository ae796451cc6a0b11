// SPDX-License-Identifier: MIT
// The run-time output size test models (tests/models/dynout, gen.py) in
// onnxruntime-node on deterministic inputs (the LCG of model_test.c):
// head_nonzero x [1, 3, 8, 8] in [-1, 1) from seed 1234 (the input gen.py
// chose the threshold for); nms_tail boxes [1, 20, 4] (centres in [0, 1),
// sides in [0.1, 0.4), corners y1, x1, y2, x2) from seed 77 and scores
// [1, 2, 20] in [0, 1) from seed 78.  Writes OUTDIR/<model>/in_<name>.bin,
// every output as <name>.bin (raw little endian, int64 as int64) and
// shapes.txt ("<name> <dims, x-separated>" per output): the references
// npu_run_dynout.sh compares against.
// Usage: node ort_dynout.js MODELDIR OUTDIR
// Prints "N passed, N failed".
const path = require('path');
const fs = require('fs');
const { ort, check, lcg, write, run } = require('./ort_common.js');

function inputs(model) {
  if (model === 'head_nonzero') {
    const r = lcg(1234), x = new Float32Array(3 * 8 * 8);
    for (let i = 0; i < x.length; i++) x[i] = r() / 32768 - 1;
    return { x: new ort.Tensor('float32', x, [1, 3, 8, 8]) };
  }
  const rb = lcg(77), rs = lcg(78), b = new Float32Array(20 * 4), s = new Float32Array(2 * 20);
  for (let i = 0; i < 20; i++) {
    const cy = rb() / 65536, cx = rb() / 65536;
    const h = 0.1 + 0.3 * rb() / 65536, w = 0.1 + 0.3 * rb() / 65536;
    b.set([cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2], i * 4);
  }
  for (let i = 0; i < s.length; i++) s[i] = rs() / 65536;
  return { boxes: new ort.Tensor('float32', b, [1, 20, 4]),
           scores: new ort.Tensor('float32', s, [1, 2, 20]) };
}

async function main() {
  const [modelDir, outDir] = process.argv.slice(2);
  for (const name of ['head_nonzero', 'nms_tail']) {
    const sess = await ort.InferenceSession.create(path.join(modelDir, name + '.onnx'));
    const feeds = inputs(name);
    const out = await sess.run(feeds);
    const dir = path.join(outDir, name);
    fs.mkdirSync(dir, { recursive: true });
    for (const [n, t] of Object.entries(feeds)) write(dir, 'in_' + n, t);
    let shapes = '', some = true;
    for (const [n, t] of Object.entries(out)) {
      write(dir, n, t);
      shapes += n + ' ' + t.dims.join('x') + '\n';
      some = some && t.dims[0] > 0;
    }
    fs.writeFileSync(path.join(dir, 'shapes.txt'), shapes);
    check(some, `${name}: every output has rows`, shapes.replace(/\n/g, '; '));
  }
}
run(main);
