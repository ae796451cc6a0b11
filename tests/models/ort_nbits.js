// SPDX-License-Identifier: MIT
// The MatMulNBits test models (tests/models/nbits) in onnxruntime-node:
// each runs on the committed input A (in_A.bin) and its output Y is
// written to OUTDIR/<model>/Y.bin (raw float32) as the reference libnpu
// is compared with (npu_run_nbits.sh).
// Usage: node ort_nbits.js MODELDIR OUTDIR
// Prints "N passed, N failed".
const path = require('path');
const fs = require('fs');
const cache = process.env.NPU_CACHE || path.join(process.env.HOME, '.cache', 'npu');
const ort = require(path.join(cache, 'ort', 'node_modules', 'onnxruntime-node'));

const [dir, out] = process.argv.slice(2);
let passed = 0, failed = 0;

async function main() {
  const raw = fs.readFileSync(path.join(dir, 'in_A.bin'));
  const a = new Float32Array(raw.buffer, raw.byteOffset, raw.length / 4);
  const K = 256;
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.onnx')).sort()) {
    const name = f.replace(/\.onnx$/, '');
    try {
      const s = await ort.InferenceSession.create(path.join(dir, f));
      const r = await s.run({ A: new ort.Tensor('float32', a, [1, a.length / K, K]) });
      const y = r.Y.data;
      if (!y.every(Number.isFinite)) throw new Error('output not finite');
      fs.mkdirSync(path.join(out, name), { recursive: true });
      fs.writeFileSync(path.join(out, name, 'Y.bin'), Buffer.from(y.buffer, y.byteOffset, y.byteLength));
      passed++;
      console.log(`ok - ${f} runs in onnxruntime, Y ${r.Y.dims.join('x')}`);
    } catch (e) {
      failed++;
      console.log(`not ok - ${f} runs in onnxruntime: ${e.message}`);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
main();
