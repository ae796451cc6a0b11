// SPDX-License-Identifier: MIT
// The kernel CI's host-step model (tests/guest/hoststep/conv_det_add.onnx:
// Conv -> Det -> Add, exported by PyTorch) in onnxruntime-node on a
// deterministic x [1, 3, 8, 8]: OUTDIR/in_x.bin and OUTDIR/y.bin, the
// reference npu_run_hoststep.sh compares libnpu's --cpu-fallback run with.
// Usage: node ort_hoststep.js MODEL OUTDIR
// Prints "N passed, N failed".
const fs = require('fs');
const { ort, check, lcg, write, run } = require('./ort_common.js');

run(async () => {
  const [model, out] = process.argv.slice(2);
  const s = await ort.InferenceSession.create(model, { logSeverityLevel: 3 });
  const r = lcg(31), x = new Float32Array(3 * 8 * 8);
  for (let i = 0; i < x.length; i++)
    x[i] = r() / 65536 - 0.5;
  const res = await s.run({ x: new ort.Tensor('float32', x, [1, 3, 8, 8]) });
  fs.mkdirSync(out, { recursive: true });
  write(out, 'in_x', { data: x });
  write(out, 'y', res.y);
  check(res.y.data.every(Number.isFinite) && res.y.dims.join('x') === '1x4',
        'hoststep: onnxruntime gives y 1x4, finite', res.y.dims.join('x'));
});
