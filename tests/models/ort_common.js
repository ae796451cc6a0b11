// SPDX-License-Identifier: MIT
// What the onnxruntime reference scripts of tests/models share: the
// onnxruntime-node `make models` installs in the cache (fetch.sh; the
// cache is NPU_CACHE, else ~/.cache/npu), checks printed as "ok - ..." or
// "not ok - ..." and counted, the LCG of model_test.c that makes the
// inputs, raw tensor files, and the closing "N passed, N failed" line
// with the exit status.
// Usage: const { ort, check, lcg, write, run } = require('./ort_common.js');
const path = require('path');
const fs = require('fs');

const cache = process.env.NPU_CACHE || path.join(process.env.HOME, '.cache', 'npu');
const ort = require(path.join(cache, 'ort', 'node_modules', 'onnxruntime-node'));

let passed = 0, failed = 0;
function check(ok, what, detail) {
  if (ok) { passed++; console.log('ok - ' + what); }
  else { failed++; console.log('not ok - ' + what + ': ' + detail); }
}

// Same LCG as tests/models/model_test.c: 16-bit values from SEED.
function lcg(seed) {
  return () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) & 0xffff;
  };
}

// Tensor T's data as DIR/NAME.bin (raw, little endian), as npu-run reads and writes them.
function write(dir, name, t) {
  fs.writeFileSync(path.join(dir, name + '.bin'),
                   Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
}

// Runs async MAIN, then prints the count and exits 1 if a check failed.
// An exception exits 1 too: printed whole, or its message after LABEL.
function run(main, label) {
  main().then(() => {
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
  }).catch((e) => {
    if (label) console.error(label + ':', e.message);
    else console.error(e);
    process.exit(1);
  });
}

module.exports = { ort, check, lcg, write, run };
