// Run an ONNX model in onnxruntime on the deterministic input that
// tests/models/model_test.c also builds, or on INPUT (raw float32 NHWC
// [1,128,128,3]); write each output as raw float32.
// Usage: node ort_ref.js MODEL OUTDIR [THREADS] [INPUT]
const path = require('path');
const fs = require('fs');
const cache = process.env.NPU_CACHE || path.join(process.env.HOME, '.cache', 'npu');
const ort = require(path.join(cache, 'ort', 'node_modules', 'onnxruntime-node'));
(async () => {
  const s = await ort.InferenceSession.create(process.argv[2], {
    intraOpNumThreads: Number(process.argv[4] || 1), logSeverityLevel: 3 });
  const meta = s.inputMetadata ? s.inputMetadata[0] : null;
  const n = 128 * 128 * 3;
  let x = new Float32Array(n);
  if (process.argv[5]) {
    const b = fs.readFileSync(process.argv[5]);
    if (b.length !== n * 4)
      throw new Error(process.argv[5] + ' is ' + b.length + ' bytes, not ' + n * 4);
    x = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
  } else {
    let seed = 1;
    for (let i = 0; i < n; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;   // same LCG as the C side
      x[i] = ((seed >>> 8) & 0xffff) / 32768 - 1;
    }
  }
  const feeds = {};
  feeds[s.inputNames[0]] = new ort.Tensor('float32', x, [1, 128, 128, 3]);
  const out = await s.run(feeds);
  for (const k of s.outputNames)
    fs.writeFileSync(path.join(process.argv[3], k.replace(/[^A-Za-z0-9._-]/g, '_') + '.bin'),
                     Buffer.from(out[k].data.buffer));
})().catch((e) => { console.error('ort_ref:', e.message); process.exit(1); });
