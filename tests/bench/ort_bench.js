// SPDX-License-Identifier: MIT
// The reference side of make bench: onnxruntime-node on one model.
//
//   node ort_bench.js run MODEL THREADS ITERATIONS WARMUP [--out DIR] FEED...
//     median wall latency of InferenceSession.run with THREADS intra-op
//     threads; each FEED is NAME=FILE:DTYPE:DIMS (raw little-endian data,
//     DTYPE float32 or int64, DIMS as 1x128); with --out, each output is
//     written to DIR/NAME.bin (raw float32) after the timed runs.
//     Prints {"threads": T, "iterations": N, "p50_ms": .., "mean_ms": .., "min_ms": ..}
//
//   node ort_bench.js create MODEL REPEATS
//     median wall time of InferenceSession.create (graph optimisation
//     "all", one intra-op thread) over REPEATS sessions, after one untimed
//     creation that pays for onnxruntime's process-wide initialisation.
//     Prints {"repeats": N, "p50_ms": .., "min_ms": ..}
//
// Prints one JSON line; any failure is a message on stderr and exit 1.
const path = require('path');
const fs = require('fs');
const cache = process.env.NPU_CACHE || path.join(process.env.HOME, '.cache', 'npu');
let ort;
try {
  ort = require(path.join(cache, 'ort', 'node_modules', 'onnxruntime-node'));
} catch (e) {
  console.error(`ort_bench: onnxruntime-node is not in ${cache}/ort: run make models`);
  process.exit(1);
}

const USAGE = 'usage: ort_bench.js run MODEL THREADS ITERATIONS WARMUP [--out DIR] ' +
  'NAME=FILE:DTYPE:DIMS... | ort_bench.js create MODEL REPEATS';

function median(t) {
  t.sort((p, q) => p - q);
  return t[Math.floor((t.length - 1) / 2)];
}

function ms(t0) { return Number(process.hrtime.bigint() - t0) / 1e6; }

// NAME=FILE:DTYPE:DIMS -> [NAME, ort.Tensor]
function feed(spec) {
  const m = /^([^=]+)=(.+):(float32|int64):([0-9x]+)$/.exec(spec);
  if (!m)
    throw new Error(`feed '${spec}': give NAME=FILE:DTYPE:DIMS (DTYPE float32 or int64)`);
  const [, name, file, dtype, d] = m;
  const dims = d.split('x').map(Number);
  const b = fs.readFileSync(file);
  const ab = b.buffer.slice(b.byteOffset, b.byteOffset + b.length);  // aligned copy
  const data = dtype === 'int64' ? new BigInt64Array(ab) : new Float32Array(ab);
  if (data.length !== dims.reduce((p, q) => p * q, 1))
    throw new Error(`feed ${name}: ${file} holds ${data.length} elements, not ${d}`);
  return [name, new ort.Tensor(dtype, data, dims)];
}

async function run(args) {
  const [model, threads, iters, warm] = args.splice(0, 4);
  if (warm === undefined)
    throw new Error(USAGE);
  let out = null;
  const feeds = {};
  while (args.length) {
    const a = args.shift();
    if (a === '--out')
      out = args.shift();
    else {
      const [n, t] = feed(a);
      feeds[n] = t;
    }
  }
  const s = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1,
    executionMode: 'sequential', logSeverityLevel: 3 });
  for (const n of s.inputNames)
    if (!feeds[n])
      throw new Error(`${model} needs input ${n}: give ${n}=FILE:DTYPE:DIMS`);
  for (let i = 0; i < Number(warm); i++)
    await s.run(feeds);
  const t = [];
  let r = null;
  for (let i = 0; i < Number(iters); i++) {
    const t0 = process.hrtime.bigint();
    r = await s.run(feeds);
    t.push(ms(t0));
  }
  if (out) {
    fs.mkdirSync(out, { recursive: true });
    for (const n of s.outputNames)
      fs.writeFileSync(path.join(out, n + '.bin'), Buffer.from(r[n].data.buffer,
        r[n].data.byteOffset, r[n].data.byteLength));
  }
  const mean = t.reduce((p, q) => p + q, 0) / t.length;
  const min = Math.min(...t);
  console.log(JSON.stringify({ threads: Number(threads), iterations: t.length,
    p50_ms: median(t), mean_ms: mean, min_ms: min }));
}

async function create(args) {
  const [model, repeats] = args;
  if (!repeats || !(Number(repeats) >= 1))
    throw new Error(USAGE);
  const opts = { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all', logSeverityLevel: 3 };
  await (await ort.InferenceSession.create(model, opts)).release();
  const t = [];
  for (let i = 0; i < Number(repeats); i++) {
    const t0 = process.hrtime.bigint();
    const s = await ort.InferenceSession.create(model, opts);
    t.push(ms(t0));
    await s.release();
  }
  const min = Math.min(...t);
  console.log(JSON.stringify({ repeats: t.length, p50_ms: median(t), min_ms: min }));
}

(async () => {
  const [mode, ...args] = process.argv.slice(2);
  if (mode === 'run')
    await run(args);
  else if (mode === 'create')
    await create(args);
  else
    throw new Error(USAGE);
})().catch((e) => { console.error('ort_bench:', e.message); process.exit(1); });
