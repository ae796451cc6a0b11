// The reference side of make bench: onnxruntime-node's latency for one
// model on one input, with a given intra-op thread count.
// Usage: node ort_bench.js MODEL INPUT.raw THREADS ITERATIONS WARMUP
// Prints one JSON line: {"threads": T, "iterations": N, "p50_ms": .., "mean_ms": .., "min_ms": ..}
const path = require('path');
const fs = require('fs');
const cache = process.env.NPU_CACHE || path.join(process.env.HOME, '.cache', 'npu');
const ort = require(path.join(cache, 'ort', 'node_modules', 'onnxruntime-node'));
(async () => {
  const [model, input, threads, iters, warm] = process.argv.slice(2);
  if (!warm)
    throw new Error('usage: ort_bench.js MODEL INPUT.raw THREADS ITERATIONS WARMUP');
  const s = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1,
    executionMode: 'sequential', logSeverityLevel: 3 });
  const b = fs.readFileSync(input);
  const x = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
  const feeds = {};
  feeds[s.inputNames[0]] = new ort.Tensor('float32', x, [1, 128, 128, 3]);
  for (let i = 0; i < Number(warm); i++)
    await s.run(feeds);
  const t = [];
  for (let i = 0; i < Number(iters); i++) {
    const t0 = process.hrtime.bigint();
    await s.run(feeds);
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  t.sort((p, q) => p - q);
  const mean = t.reduce((p, q) => p + q, 0) / t.length;
  console.log(JSON.stringify({ threads: Number(threads), iterations: t.length,
    p50_ms: t[Math.floor((t.length - 1) / 2)], mean_ms: mean, min_ms: t[0] }));
})().catch((e) => { console.error('ort_bench:', e.message); process.exit(1); });
