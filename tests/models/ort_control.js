// SPDX-License-Identifier: MIT
// The control-flow test models (tests/models/control, gen.py) in
// onnxruntime-node, each over cases that take every path: steps_branch
// with n = 0, 3, 7 on x and -x (the If on sum(h) goes both ways),
// early_exit with limits that stop it before the first iteration, part
// way and at its bound of 12, nested with n = 0, 1, 4 on x and -x (the
// Loop inside a branch runs or not, the If inside the other Loop goes
// both ways).  x is deterministic (the LCG of
// model_test.c).  Writes OUTDIR/<model>/<case>/in_<input>.bin and every
// output (raw little endian, float32 or int64) for npu_run_control.sh.
// Usage: node ort_control.js MODELDIR OUTDIR
// Prints "N passed, N failed" (a case passes when its outputs are finite).
const path = require('path');
const fs = require('fs');
const { ort, check, lcg, write, run } = require('./ort_common.js');

const WIDTH = 16;

function xs(sign) {
  const r = lcg(1717), x = new Float32Array(WIDTH);
  for (let i = 0; i < WIDTH; i++) x[i] = sign * (r() / 32768 - 1);
  return new ort.Tensor('float32', x, [1, WIDTH]);
}

const CASES = {
  steps_branch: [0, 3, 7].flatMap(n => [1, -1].map(s => ({
    name: `n${n}_${s > 0 ? 'pos' : 'neg'}`,
    feeds: { x: xs(s), n: new ort.Tensor('int64', BigInt64Array.from([BigInt(n)]), []) },
  }))),
  nested: [0, 1, 4].flatMap(n => [1, -1].map(s => ({
    name: `n${n}_${s > 0 ? 'pos' : 'neg'}`,
    feeds: { x: xs(s), n: new ort.Tensor('int64', BigInt64Array.from([BigInt(n)]), []) },
  }))),
  early_exit: [0, 2, 1e6].map(l => ({
    name: `limit${l}`,
    feeds: { x: xs(1), limit: new ort.Tensor('float32', Float32Array.from([l]), []) },
  })),
};

async function main() {
  const [modelDir, outDir] = process.argv.slice(2);
  for (const [name, cases] of Object.entries(CASES)) {
    const sess = await ort.InferenceSession.create(path.join(modelDir, name + '.onnx'));
    for (const c of cases) {
      const out = await sess.run(c.feeds);
      const dir = path.join(outDir, name, c.name);
      fs.mkdirSync(dir, { recursive: true });
      for (const [i, t] of Object.entries(c.feeds)) write(dir, 'in_' + i, t);
      let finite = true, what = '';
      for (const [o, t] of Object.entries(out)) {
        write(dir, o, t);
        if (t.type === 'float32') finite = finite && t.data.every(Number.isFinite);
        else what += ` ${o} = ${t.data[0]}`;
        if (o === 'h' && name === 'steps_branch')
          what += ` sum(h) ${t.data.reduce((a, b) => a + b, 0) > 0 ? '> 0' : '<= 0'}`;
      }
      check(finite, `${name} ${c.name}: finite outputs${what}`, 'not finite');
    }
  }
}
run(main);
