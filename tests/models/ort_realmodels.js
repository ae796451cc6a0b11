// SPDX-License-Identifier: MIT
// The real models from the npm registry (tests/models/README.md) in
// onnxruntime-node, on deterministic inputs, as references for libnpu:
//  - openWakeWord's speech embedding (tf2onnx, input float32[?,76,32,1]) on
//    4 windows of a synthetic mel spectrogram: the batch dim is open, and
//    npu-run takes it from the size of the raw input file;
//  - PaddleOCR's PP-OCRv4 text detector, recogniser and text-direction classifier
//    (paddle2onnx, inputs float32[?,3,?,?]) on drawn "text", the inputs as
//    .npy files (npu-run takes every open dim from the header);
//  - M-LSD tiny, Keijiro's tf2onnx line-segment detector
//    (float32[1,320,320,4] RGBA in 0..255) on a drawn picture of boxes and
//    lines.
// Each case's inputs and outputs go to OUTDIR/<case>/ (raw, little endian;
// inputs as in_<name>.bin, names sanitised as npu-run does).  Every output
// must be finite and of the declared shape.
// Usage: node ort_realmodels.js MODELDIR OUTDIR
// Prints "N passed, N failed".
const path = require('path');
const fs = require('fs');
const { ort, check, lcg, write: save, run } = require('./ort_common.js');

const stem = (n) => n.replace(/[^A-Za-z0-9._-]/g, '_');

// A mel spectrogram as openWakeWord's melspectrogram model leaves it
// (log scale, about -4..4): smooth bands that drift over time, plus noise.
function melFeeds(n) {
  const r = lcg(17), x = new Float32Array(n * 76 * 32);
  for (let w = 0; w < n; w++)
    for (let t = 0; t < 76; t++)
      for (let m = 0; m < 32; m++)
        x[(w * 76 + t) * 32 + m] = 2.5 * Math.sin(0.3 * m + 0.11 * t + w) +
          0.5 * Math.cos(0.07 * m * t) + r() / 65536 - 0.5;
  return { input_1: new ort.Tensor('float32', x, [n, 76, 32, 1]) };
}

// A 320x320 RGBA picture in 0..255: a gradient, three boxes' outlines, two
// diagonals and noise; alpha 255.
function lineFeeds() {
  const S = 320, r = lcg(5), x = new Float32Array(S * S * 4);
  const boxes = [[40, 50, 200, 160], [120, 180, 290, 300], [210, 30, 300, 110]];
  for (let y = 0; y < S; y++)
    for (let X = 0; X < S; X++) {
      let v = 60 + (X + y) / 8;
      for (const [x0, y0, x1, y1] of boxes)
        if (((X === x0 || X === x1) && y >= y0 && y <= y1) ||
            ((y === y0 || y === y1) && X >= x0 && X <= x1) ||
            ((Math.abs(X - x0) < 2 || Math.abs(X - x1) < 2) && y >= y0 && y <= y1) ||
            ((Math.abs(y - y0) < 2 || Math.abs(y - y1) < 2) && X >= x0 && X <= x1))
          v = 240;
      if (Math.abs(X - y) < 2 || Math.abs(X + y - 300) < 2)
        v = 20;
      const o = (y * S + X) * 4;
      x[o] = Math.min(255, v + (r() % 16));
      x[o + 1] = Math.min(255, v * 0.9 + (r() % 16));
      x[o + 2] = Math.min(255, v * 0.8 + (r() % 16));
      x[o + 3] = 255;
    }
  return { 'input_image_with_alpha:0': new ort.Tensor('float32', x, [1, S, S, 4]) };
}

// openWakeWord's timer intent classifier (7 classes, softmax) over a
// stream: 8 positions of its 34-embedding window sliding over a stream of
// 41 feature vectors (uniform noise in +-5: speech-free embeddings score
// 0 on every class, noise gives the classes distinct probabilities).  The
// probabilities of the 8 positions are one 8x7 output.
async function timerStream(dir, out) {
  const cls = await ort.InferenceSession.create(path.join(dir, 'timer_v0.1.onnx'),
                                                { logSeverityLevel: 3 });
  const r = lcg(3), e = new Float32Array(41 * 96), probs = new Float32Array(8 * 7);
  const cdir = path.join(out, 'oww_timer_stream');
  for (let i = 0; i < e.length; i++) e[i] = (r() / 65536 - 0.5) * 10;
  fs.mkdirSync(cdir, { recursive: true });
  save(cdir, 'in_stream', { data: e });
  for (let i = 0; i < 8; i++) {
    const x = new ort.Tensor('float32', e.slice(i * 96, (i + 34) * 96), [1, 34, 96]);
    probs.set(Object.values(await cls.run({ [cls.inputNames[0]]: x }))[0].data, i * 7);
  }
  let sums = true;
  for (let i = 0; i < 8; i++) {
    let t = 0;
    for (let c = 0; c < 7; c++) t += probs[i * 7 + c];
    sums = sums && Math.abs(t - 1) < 1e-4;
  }
  check(sums, 'oww_timer_stream: 8 positions, 7 probabilities each summing to 1', '');
  save(cdir, 'probs', { data: probs });
}

// Silero VAD v4 over a stream: 12 frames of 512 samples at 16 kHz (3 of
// near silence, 6 of a voiced, speech-like sound, 3 of near silence), the
// LSTM state h, c of each frame's outputs carried into the next frame's
// inputs from zeros, as applications run it.  Per frame: the speech
// probability and the state hn, cn, written one frame after another
// (probs 12, hn and cn 12 x 2 x 64).
const SILERO_FRAMES = 12, SILERO_HOP = 512;
function speechLike() {
  const sr = 16000, n = SILERO_FRAMES * SILERO_HOP, r = lcg(23), x = new Float32Array(n);
  const t0 = 3 * SILERO_HOP, t1 = 9 * SILERO_HOP;
  // Vowel-like formants (Hz) that change every 1024 samples (a syllable).
  const vowels = [[700, 1200, 2500], [300, 2200, 2900], [500, 900, 2400], [400, 1900, 2600]];
  let phase = 0;
  for (let i = 0; i < n; i++) {
    const noise = (r() / 65536 - 0.5) * 2e-3;
    if (i < t0 || i >= t1) {
      x[i] = noise;
      continue;
    }
    const t = (i - t0) / sr, f0 = 120 + 40 * Math.sin(2 * Math.PI * 1.7 * t);
    const fm = vowels[Math.floor((i - t0) / 1024) % vowels.length];
    phase += 2 * Math.PI * f0 / sr;
    let v = 0;
    for (let k = 1; k * f0 < 4000; k++) {
      let a = 0;
      for (let j = 0; j < 3; j++)
        a += Math.exp(-(((k * f0 - fm[j]) / (90 + 40 * j)) ** 2)) / (j + 1);
      v += (a + 0.02) * Math.sin(k * phase) / Math.sqrt(k);
    }
    // Syllables: 4 per second, rising from and falling to a floor.
    const env = 0.35 + 0.65 * Math.abs(Math.sin(Math.PI * 4 * t));
    x[i] = 0.25 * env * v + noise + (r() / 65536 - 0.5) * 0.01 * env;
  }
  return x;
}
async function sileroStream(dir, out) {
  const s = await ort.InferenceSession.create(path.join(dir, 'silero_vad.onnx'),
                                              { logSeverityLevel: 3 });
  const audio = speechLike(), cdir = path.join(out, 'silero_stream');
  const probs = new Float32Array(SILERO_FRAMES), hn = new Float32Array(SILERO_FRAMES * 128);
  const cn = new Float32Array(SILERO_FRAMES * 128);
  let h = new Float32Array(128), c = new Float32Array(128);
  const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
  fs.mkdirSync(cdir, { recursive: true });
  save(cdir, 'in_audio', { data: audio });
  for (let f = 0; f < SILERO_FRAMES; f++) {
    const res = await s.run({
      input: new ort.Tensor('float32', audio.slice(f * SILERO_HOP, (f + 1) * SILERO_HOP),
                            [1, SILERO_HOP]),
      sr, h: new ort.Tensor('float32', h, [2, 1, 64]), c: new ort.Tensor('float32', c, [2, 1, 64]),
    });
    probs[f] = res.output.data[0];
    h = Float32Array.from(res.hn.data);
    c = Float32Array.from(res.cn.data);
    hn.set(h, f * 128);
    cn.set(c, f * 128);
  }
  // What makes it a useful test: silence scores low, the sound high.
  const quiet = [0, 1, 2].every((f) => probs[f] < 0.2);
  const speech = [5, 6, 7].every((f) => probs[f] > 0.8);
  check(quiet && speech && probs.every(Number.isFinite),
        'silero_stream: 12 frames, silence < 0.2 and speech > 0.8', Array.from(probs).join(' '));
  save(cdir, 'probs', { data: probs });
  save(cdir, 'hn', { data: hn });
  save(cdir, 'cn', { data: cn });
}

// Silero VAD v5 over the same stream: one state [2, 1, 128] carried from
// zeros, sr 16000 given at run time (libnpu fixes it at compile time with
// --fix sr=16000).  Per frame: the probability and stateN.
async function sileroV5Stream(dir, out) {
  const s = await ort.InferenceSession.create(path.join(dir, 'silero_vad_v5.onnx'),
                                              { logSeverityLevel: 3 });
  const audio = speechLike(), cdir = path.join(out, 'silero_v5_stream');
  const probs = new Float32Array(SILERO_FRAMES), states = new Float32Array(SILERO_FRAMES * 256);
  let state = new Float32Array(256);
  const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
  fs.mkdirSync(cdir, { recursive: true });
  for (let f = 0; f < SILERO_FRAMES; f++) {
    const res = await s.run({
      input: new ort.Tensor('float32', audio.slice(f * SILERO_HOP, (f + 1) * SILERO_HOP),
                            [1, SILERO_HOP]),
      state: new ort.Tensor('float32', state, [2, 1, 128]), sr,
    });
    probs[f] = res.output.data[0];
    state = Float32Array.from(res.stateN.data);
    states.set(state, f * 256);
  }
  const quiet = [0, 1, 2].every((f) => probs[f] < 0.2);
  const speech = [5, 6, 7].every((f) => probs[f] > 0.8);
  check(quiet && speech && probs.every(Number.isFinite),
        'silero_v5_stream: 12 frames, silence < 0.2 and speech > 0.8', Array.from(probs).join(' '));
  save(cdir, 'probs', { data: probs });
  save(cdir, 'state', { data: states });
}

// openWakeWord's three models as its library chains them: 2 s of a voiced,
// speech-like sound (32000 samples at 16 kHz: harmonics of a gliding pitch
// under a syllable envelope, plus noise) into melspectrogram.onnx
// ([1, 1, 197, 32] frames of 32 mel bands, 10 ms apart), scaled as the
// library does (x / 10 + 2), cut into windows of 76 frames every 8 (16 of
// them) into embedding_model.onnx ([16, 1, 1, 96]), the 16 embeddings into
// the "hey jarvis" classifier ([1, 16, 96] -> a score).
const OWW_SAMPLES = 32000, OWW_FRAMES = 197, OWW_WINDOWS = 16;
function wakeAudio() {
  const sr = 16000, r = lcg(29), x = new Float32Array(OWW_SAMPLES);
  let phase = 0;
  for (let i = 0; i < OWW_SAMPLES; i++) {
    const t = i / sr, f0 = 140 + 50 * Math.sin(2 * Math.PI * 2.3 * t);
    phase += 2 * Math.PI * f0 / sr;
    let v = 0;
    for (let k = 1; k * f0 < 6000; k++)
      v += Math.sin(k * phase + 0.3 * k) / k;
    const env = 0.2 + 0.8 * Math.abs(Math.sin(Math.PI * 3 * t));
    x[i] = 0.3 * env * v + (r() / 65536 - 0.5) * 0.02;
  }
  return x;
}
async function owwChain(dir, out) {
  const mel = await ort.InferenceSession.create(path.join(dir, 'melspectrogram.onnx'),
                                                { logSeverityLevel: 3 });
  const emb = await ort.InferenceSession.create(path.join(dir, 'embedding_model.onnx'),
                                                { logSeverityLevel: 3 });
  const cls = await ort.InferenceSession.create(path.join(dir, 'hey_jarvis_v0.1.onnx'),
                                                { logSeverityLevel: 3 });
  const audio = wakeAudio(), cdir = path.join(out, 'oww_chain');
  const m = (await mel.run({ input: new ort.Tensor('float32', audio, [1, OWW_SAMPLES]) })).output;
  const win = new Float32Array(OWW_WINDOWS * 76 * 32);
  for (let w = 0; w < OWW_WINDOWS; w++)
    for (let i = 0; i < 76 * 32; i++)
      win[w * 76 * 32 + i] = m.data[w * 8 * 32 + i] / 10 + 2;
  const e = Object.values(await emb.run({
    input_1: new ort.Tensor('float32', win, [OWW_WINDOWS, 76, 32, 1]) }))[0];
  const score = Object.values(await cls.run({
    [cls.inputNames[0]]: new ort.Tensor('float32', e.data, [1, OWW_WINDOWS, 96]) }))[0];
  check(JSON.stringify(m.dims) === JSON.stringify([1, 1, OWW_FRAMES, 32]) &&
        m.data.every(Number.isFinite) && e.data.length === OWW_WINDOWS * 96 &&
        e.data.every(Number.isFinite) && score.data.length === 1 &&
        score.data[0] >= 0 && score.data[0] <= 1,
        'oww_chain: 197 mel frames, 16 embeddings of 96, a score in 0..1',
        JSON.stringify(m.dims) + ' ' + score.data[0]);
  fs.mkdirSync(cdir, { recursive: true });
  save(cdir, 'in_input', { data: audio });
  save(cdir, 'mel', m);
  save(cdir, 'windows', { data: win });
  save(cdir, 'embedding', e);
  save(cdir, 'score', score);
}

// A NumPy .npy (format 1.0) of float32 tensor @t: npu-run takes every
// open dim of a model input from its header.
function saveNpy(dir, name, t) {
  let h = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + t.dims.join(', ') +
          (t.dims.length === 1 ? ',' : '') + '), }';
  h += ' '.repeat(64 - ((10 + h.length + 1) % 64)) + '\n';
  const pre = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, h.length & 0xff, h.length >> 8]);
  fs.writeFileSync(path.join(dir, name + '.npy'),
                   Buffer.concat([pre, Buffer.from(h, 'latin1'),
                                  Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)]));
}

// "Text" for PaddleOCR: dark strokes (bars of glyph-like widths, a few
// slanted) on a light, slightly uneven page, @b images of @h x @w, RGB in
// 0..255, then normalised as PaddleOCR does: (v / 255 - mean) / std.
function textFeeds(b, h, w, mean, std, seed) {
  const r = lcg(seed), x = new Float32Array(b * 3 * h * w);
  for (let e = 0; e < b; e++) {
    const page = new Float32Array(h * w);
    for (let i = 0; i < h * w; i++) page[i] = 225 + (r() % 24);
    for (let line = 0; line * 40 + 24 < h; line++) {
      const y0 = 8 + line * 40 + (e * 3) % 7, th = 16 + (e + line) % 8;
      for (let X = 6 + e * 5; X < w - 12;) {
        const sw = 2 + (r() % 4), gap = 2 + (r() % 7), slant = r() % 3 - 1;
        for (let y = y0; y < y0 + th && y < h; y++)
          for (let k = 0; k < sw; k++) {
            const xx = X + k + (slant * (y - y0)) / 4;
            if (xx >= 0 && xx < w) page[y * w + Math.floor(xx)] = 30 + (r() % 30);
          }
        X += sw + gap + ((r() % 9) === 0 ? 10 : 0);
      }
    }
    for (let c = 0; c < 3; c++)
      for (let i = 0; i < h * w; i++)
        x[(e * 3 + c) * h * w + i] = (page[i] / 255 - mean[c]) / std[c];
  }
  return { x: new ort.Tensor('float32', x, [b, 3, h, w]) };
}
const IMAGENET = [[0.485, 0.456, 0.406], [0.229, 0.224, 0.225]];

const CASES = [
  { name: 'oww_embedding_b4', model: 'embedding_model.onnx', feeds: () => melFeeds(4),
    shapes: { conv2d_19: [4, 1, 1, 96] } },
  { name: 'ppocr_det_320', model: 'ch_PP-OCRv4_det_infer.onnx',
    feeds: () => textFeeds(1, 320, 320, IMAGENET[0], IMAGENET[1], 11), npy: true,
    shapes: { 'sigmoid_0.tmp_0': [1, 1, 320, 320] } },
  { name: 'ppocr_cls_b4', model: 'ch_ppocr_mobile_v2.0_cls_infer.onnx',
    feeds: () => textFeeds(4, 48, 192, [0.5, 0.5, 0.5], [0.5, 0.5, 0.5], 13), npy: true,
    shapes: { 'softmax_0.tmp_0': [4, 2] } },
  { name: 'ppocr_rec_320', model: 'ch_PP-OCRv4_rec_infer.onnx',
    feeds: () => textFeeds(1, 48, 320, [0.5, 0.5, 0.5], [0.5, 0.5, 0.5], 17), npy: true,
    shapes: { 'softmax_11.tmp_0': [1, 40, 6625] } },
  { name: 'mlsd_tiny_320', model: 'mlsd_320x320_tiny.onnx', feeds: lineFeeds,
    shapes: { offsets: [1, 160, 160, 4], scores: [1, 160, 160, 1] } },
];

async function main() {
  const [dir, out] = process.argv.slice(2);
  for (const c of CASES) {
    const file = path.join(dir, c.model);
    let sess;
    try {
      sess = await ort.InferenceSession.create(file, { executionProviders: ['cpu'], logSeverityLevel: 3 });
    } catch (e) {
      check(false, c.name + ' loads in onnxruntime', e.message);
      continue;
    }
    const feeds = c.feeds(), res = await sess.run(feeds), cdir = path.join(out, c.name);
    fs.mkdirSync(cdir, { recursive: true });
    for (const [k, t] of Object.entries(feeds))
      (c.npy ? saveNpy : save)(cdir, 'in_' + stem(k), t);
    for (const [k, dims] of Object.entries(c.shapes)) {
      const t = res[k];
      check(t && JSON.stringify(t.dims) === JSON.stringify(dims) &&
            t.data.every(Number.isFinite), c.name + ' ' + k + ' is finite, ' + dims.join('x'),
            t ? JSON.stringify(t.dims) : 'missing');
      if (t)
        save(cdir, stem(k), t);
    }
  }
  await timerStream(dir, out);
  await sileroStream(dir, out);
  await sileroV5Stream(dir, out);
  await owwChain(dir, out);
}
run(main);
