#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tests of the Python module npu (make check-python).

The same models run through libnpu's C API (python-c-ref, c_ref.c) and
through the module: outputs, simulated cycles and the post-processing
helpers' results must be identical, bit for bit.  Then dtypes and shapes,
submit/wait, errors (status and message), memory after close, and a
staged `make install`.  Ends with "N passed, N failed".

Environment (set by make check-python): NPU_BUILD, NPU_C_REF,
NPU_BLAZEFACE, NPU_FACE_PHOTO, NPU_PYTHON; PYTHONPATH holds build/python.
"""
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import numpy as np

import npu

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, os.environ.get("NPU_BUILD", "build"))
C_REF = os.path.join(ROOT, os.environ.get("NPU_C_REF", "build/tests/python-c-ref"))
TINY = os.path.join(ROOT, "tools/npu-run/samples/tiny-cnn.onnx")
TINY_LABELS = os.path.join(ROOT, "tools/npu-run/samples/tiny-cnn.labels")
CACHE = os.path.expanduser("~/.cache/npu/models")
BLAZEFACE = os.environ.get("NPU_BLAZEFACE",
                           os.path.join(CACHE, "face_detection_front_128x128_barracuda.onnx"))
PHOTO = os.environ.get("NPU_FACE_PHOTO", os.path.join(CACHE, "astronaut-128.raw"))
PYTHON = os.environ.get("NPU_PYTHON", sys.executable)


def plain_env():
    """The environment without the sanitizer runtimes check-python's second pass
    preloads into Python: the C programs and make run as themselves."""
    env = dict(os.environ, NPU_EMU_STATS="0")
    env.pop("LD_PRELOAD", None)
    return env


def hexfloats(words):
    return np.array([float.fromhex(w) for w in words], np.float32)


class CReference:
    """A run of python-c-ref on @model and @input_path, parsed."""

    def __init__(self, model, input_path, *args):
        self.dir = tempfile.mkdtemp(prefix="npu-pytest-c-")
        out = subprocess.run([C_REF, model, input_path, self.dir, *args], check=True,
                             capture_output=True, text=True, env=plain_env()).stdout
        self.topk, self.dets, self.lines = [], [], {}
        for line in out.splitlines():
            tag, *rest = line.split(" ")
            if tag == "topk":
                self.topk.append((int(rest[0]), float.fromhex(rest[1]),
                                  None if rest[2] == "-" else " ".join(rest[2:])))
            elif tag == "det":
                v = [float.fromhex(w) for w in rest[:5]]
                kp = [float.fromhex(w) for w in rest[6:]]
                self.dets.append((*v, int(rest[5]), tuple(zip(kp[0::2], kp[1::2]))))
            else:
                self.lines[tag] = rest
        self.cycles = int(self.lines["cycles"][0])

    def output(self, i, info):
        raw = np.fromfile(os.path.join(self.dir, f"{i}.bin"), info.dtype)
        return raw.reshape(info.shape)


class TinyCNN(unittest.TestCase):
    """tools/npu-run/samples/tiny-cnn.onnx on a seeded random image."""

    @classmethod
    def setUpClass(cls):
        # A longer run for the GIL test: BlazeFace (about 80k simulated cycles).
        BlazeFace.shared = npu.Model(BLAZEFACE)
        BlazeFace.model_input = BlazeFace.shared.inputs[0]
        cls.model = npu.Model(TINY)
        cls.x = np.random.default_rng(19).uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)
        cls.input_path = os.path.join(tempfile.mkdtemp(prefix="npu-pytest-"), "image.raw")
        cls.x.tofile(cls.input_path)
        cls.c = CReference(TINY, cls.input_path, "--labels", TINY_LABELS)
        cls.out = cls.model.run({"image": cls.x})

    @classmethod
    def tearDownClass(cls):
        cls.model.close()
        BlazeFace.shared.close()

    def test_info(self):
        (i,), (o,) = self.model.inputs, self.model.outputs
        self.assertEqual((i.name, i.dtype, i.npu_dtype, i.shape, i.nbytes),
                         ("image", np.dtype(np.float32), "float32", (1, 3, 32, 32), 12288))
        self.assertEqual((o.name, o.dtype, o.shape, o.nbytes),
                         ("probabilities", np.dtype(np.float32), (1, 10), 40))
        self.assertEqual(self.model.batch, 1)
        self.assertGreater(self.model.info.steps, 0)
        self.assertGreater(self.model.info.const_bytes, 0)

    def test_outputs_match_c(self):
        (o,) = self.model.outputs
        got = self.out["probabilities"]
        self.assertEqual(list(self.out), ["probabilities"])
        self.assertEqual((got.dtype, got.shape), (np.dtype(np.float32), (1, 10)))
        self.assertEqual(got.tobytes(), self.c.output(0, o).tobytes())
        self.assertTrue(got.flags.owndata or got.base is not None)

    def test_stats_match_c(self):
        self.model.run(self.x)
        st = self.model.last_run
        self.assertEqual(st.device_cycles, self.c.cycles)
        self.assertEqual(sum(s.device_cycles for s in st.steps), st.device_cycles)
        self.assertEqual(len(st.steps), self.model.info.steps)
        self.assertTrue(all(s.label and not s.on_host for s in st.steps), st.steps)
        self.assertGreater(st.wall_us, 0)
        self.assertAlmostEqual(st.device_us, st.device_cycles / self.model.device.info.clock_mhz)

    def test_input_forms(self):
        want = self.out["probabilities"].tobytes()
        for inputs in ([self.x], (self.x,), self.x):
            self.assertEqual(self.model.run(inputs)["probabilities"].tobytes(), want)
        # A non-contiguous array of the right shape is copied, not refused,
        # and so is a big-endian one (the same values).
        t = np.asfortranarray(self.x)
        self.assertEqual(self.model.run(t)["probabilities"].tobytes(), want)
        self.assertEqual(self.model.run(self.x.astype(">f4"))["probabilities"].tobytes(), want)

    def test_gil_released_during_run(self):
        """Another thread runs Python code while a BlazeFace run is in C: the
        main thread's clock readings fall in the middle half of the run.
        With the GIL held, none could after the first switch interval: made
        0.1 ms here, so that the check holds for any run longer than a few
        of them rather than for a run slower than 20 ms."""
        span = {}
        photo = np.zeros(BlazeFace.model_input.shape, np.float32)

        def worker():
            span["t0"] = time.perf_counter()
            BlazeFace.shared.run(photo)
            span["t1"] = time.perf_counter()
        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-4)
        try:
            t = threading.Thread(target=worker)
            seen = []
            t.start()
            while t.is_alive():
                seen.append(time.perf_counter())
            t.join()
        finally:
            sys.setswitchinterval(interval)
        t0, t1 = span["t0"], span["t1"]
        self.assertGreater((t1 - t0) / 4, 2e-4, "the run is too short to tell")
        mid = [s for s in seen if t0 + (t1 - t0) / 4 < s < t1 - (t1 - t0) / 4]
        self.assertGreater(len(mid), 10, (t1 - t0, len(seen)))

    def test_submit_wait(self):
        job = self.model.submit({"image": self.x})
        out = job.wait()
        self.assertTrue(job.done)
        self.assertIs(job.wait(), out)
        self.assertEqual(out["probabilities"].tobytes(), self.out["probabilities"].tobytes())
        self.assertEqual(self.model.last_run.device_cycles, self.c.cycles)

    def test_one_job_at_a_time(self):
        job = self.model.submit(self.x)
        with self.assertRaises(npu.Error) as e:
            self.model.run(self.x)
        self.assertEqual(e.exception.status, npu.Status.INVALID_ARG)
        self.assertIn("wait()", e.exception.message)
        with self.assertRaises(npu.Error):
            self.model.submit(self.x)
        job.wait(timeout=60)
        self.model.run(self.x)

    def test_job_dropped_unwaited(self):
        job = self.model.submit(self.x)
        del job     # waits for the run: the model is free again
        self.assertEqual(self.model.run(self.x)["probabilities"].tobytes(),
                         self.out["probabilities"].tobytes())

    def test_threads_take_turns(self):
        results, errors = [], []

        def worker():
            try:
                for _ in range(3):
                    results.append(self.model.run(self.x)["probabilities"].tobytes())
            except Exception as exc:        # reported below
                errors.append(exc)
        threads = [threading.Thread(target=worker) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(results, [self.out["probabilities"].tobytes()] * 9)

    def test_wrong_dtype(self):
        with self.assertRaises(npu.Error) as e:
            self.model.run({"image": self.x.astype(np.float64)})
        err = e.exception
        self.assertEqual((err.status, err.status.name, int(err.status)),
                         (npu.Status.SHAPE, "SHAPE", 15))
        self.assertIn("input 'image': got float64 [1, 3, 32, 32]; the model wants float32",
                      err.message)
        self.assertIn(".astype(numpy.float32)", err.message)
        self.assertIn("tensor shape or size mismatch", str(err))

    def test_wrong_shape(self):
        for bad in (self.x.reshape(1, 32, 32, 3), self.x[:, :2]):
            with self.assertRaises(npu.Error) as e:
                self.model.run(bad)
            self.assertEqual(e.exception.status, npu.Status.SHAPE)
            self.assertIn(f"got float32 {list(bad.shape)}; the model wants float32 "
                          "[1, 3, 32, 32]", e.exception.message)

    def test_wrong_names(self):
        with self.assertRaises(npu.Error) as e:
            self.model.run({"img": self.x})
        self.assertEqual(e.exception.status, npu.Status.NOT_FOUND)
        self.assertIn("no input named 'img'; its inputs: image", e.exception.message)
        with self.assertRaises(npu.Error) as e:
            self.model.run([])
        self.assertEqual(e.exception.status, npu.Status.INVALID_ARG)
        with self.assertRaises(npu.Error) as e:
            self.model.run({})
        self.assertIn("input 'image' is not given", e.exception.message)

    def test_top_k_matches_c(self):
        got = npu.top_k(self.out["probabilities"], 5, TINY_LABELS)
        self.assertEqual([(t.index, t.score, t.label) for t in got], self.c.topk)
        # Labels as an object or a list give the same.
        labels = npu.Labels(TINY_LABELS)
        self.assertEqual(npu.top_k(self.out["probabilities"], 5, labels), got)
        self.assertEqual(npu.top_k(self.out["probabilities"], 5, list(labels)), got)
        self.assertEqual(len(labels), 10)
        self.assertEqual(labels[3], "cat")
        self.assertIsNone(npu.top_k(self.out["probabilities"], 1)[0].label)

    def test_softmax_quantize_match_c(self):
        p = self.out["probabilities"]
        np.testing.assert_array_equal(npu.softmax(p).reshape(-1),
                                      hexfloats(self.c.lines["softmax"]))
        q = npu.quantize(p, 1 / 64, 128)
        self.assertEqual((q.dtype, q.shape), (np.dtype(np.uint8), p.shape))
        self.assertEqual(q.reshape(-1).tolist(), [int(v) for v in self.c.lines["quant"]])
        back = npu.dequantize(q, 1 / 64, 128)
        np.testing.assert_array_equal(back.reshape(-1), hexfloats(self.c.lines["dequant"]))
        with self.assertRaises(npu.Error) as e:
            npu.dequantize(q, 0.0, 128)
        self.assertEqual(e.exception.status, npu.Status.INVALID_ARG)

    def test_sources(self):
        """A .npum saved from the model, the file's bytes and a file:// URL run the same."""
        want = self.out["probabilities"].tobytes()
        npum = os.path.join(tempfile.mkdtemp(prefix="npu-pytest-"), "tiny.npum")
        self.model.save(npum)
        with open(TINY, "rb") as f:
            data = f.read()
        for src in (npum, data, "file://" + TINY):
            with npu.Model(src) as m:
                self.assertEqual(m.run(self.x)["probabilities"].tobytes(), want)

    def test_url_checksum(self):
        import hashlib
        with open(TINY, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        with npu.Model("file://" + TINY, sha256=digest) as m:
            self.assertEqual(m.run(self.x)["probabilities"].tobytes(),
                             self.out["probabilities"].tobytes())
        with self.assertRaises(npu.Error) as e:
            npu.Model("file://" + TINY, sha256="0" * 64)
        self.assertEqual(e.exception.status, npu.Status.CHECKSUM)
        self.assertIn(digest, e.exception.message)
        with self.assertRaises(npu.Error) as e:
            npu.Model(TINY, sha256=digest)
        self.assertIn("apply to a model given by URL", e.exception.message)

    def test_models_share_a_device(self):
        """A model holds a partition of its device: two fit side by side when they ask
        for clusters that fit; a third finds none free (BUSY, what to do)."""
        with npu.Device("emu") as dev:
            a = npu.Model(TINY, device=dev, clusters=7)
            b = npu.Model(TINY, device=dev, clusters=7)
            self.assertEqual(a.run(self.x)["probabilities"].tobytes(),
                             b.run(self.x)["probabilities"].tobytes())
            with self.assertRaises(npu.Error) as e:
                npu.Model(TINY, device=dev)
            self.assertEqual(e.exception.status, npu.Status.BUSY)
            self.assertIn("ask for fewer clusters", e.exception.message)
            a.close()
            b.close()

    def test_shapes_and_precision(self):
        with npu.Model(TINY, shapes={"image": (1, 3, 32, 32)}, precision="bf16") as m:
            self.assertEqual(m.run(self.x)["probabilities"].tobytes(),
                             self.out["probabilities"].tobytes())
        with self.assertRaises(npu.Error) as e:
            npu.Model(TINY, shapes={"nope": (1, 3, 32, 32)})
        self.assertEqual(e.exception.status, npu.Status.INVALID_ARG)
        self.assertIn("nope", e.exception.message)
        with self.assertRaises(npu.Error) as e:
            npu.Model(TINY, precision="fp4")
        self.assertIn("bf16", e.exception.message)

    def test_outputs_outlive_the_model(self):
        m = npu.Model(TINY, device="emu")
        out = m.run(self.x)["probabilities"]
        m.close()
        self.assertFalse(m.is_open)
        self.assertFalse(m.device.is_open)     # the device it opened itself
        self.assertEqual(out.tobytes(), self.out["probabilities"].tobytes())
        with self.assertRaises(npu.Error) as e:
            m.run(self.x)
        self.assertIn("closed", e.exception.message)
        m.close()   # twice is fine

    def test_device_outlives_its_models(self):
        dev = npu.Device("emu:clusters=4")
        self.assertEqual(dev.info.clusters, 4)
        m = npu.Model(TINY, device=dev)
        with self.assertRaises(npu.Error) as e:
            dev.close()
        self.assertIn("close them", e.exception.message)
        before = dev.counters()["cycles"]
        m.run(self.x)
        self.assertGreater(dev.counters()["cycles"], before)
        m.close()
        self.assertTrue(dev.is_open)
        dev.close()


class MoreModels(unittest.TestCase):
    """A batch, and outputs of run-time size (the CPU fallback), against the C API."""

    def test_batch(self):
        x = np.random.default_rng(2).uniform(-1, 1, (2, 1, 3, 32, 32)).astype(np.float32)
        with npu.Model(TINY, batch=2) as m, npu.Model(TINY) as one:
            self.assertEqual(m.batch, 2)
            out = m.run(x)["probabilities"]
            self.assertEqual(out.shape, (2, 1, 10))
            for b in range(2):
                self.assertEqual(out[b].tobytes(), one.run(x[b])["probabilities"].tobytes())
            with self.assertRaises(npu.Error) as e:
                m.run(x[0])
            self.assertIn("the model wants float32 [2, 1, 3, 32, 32]", e.exception.message)

    def test_names_not_utf8(self):
        """ONNX names are any bytes: invalid UTF-8 becomes U+FFFD, never an exception."""
        tmp = tempfile.mkdtemp(prefix="npu-pytest-")
        with open(TINY, "rb") as f:
            data = f.read()
        bad = os.path.join(tmp, os.fsdecode(b"tiny-\xff.onnx"))     # a path not in UTF-8 too
        with open(bad, "wb") as f:       # same lengths: the protobuf stays valid
            f.write(data.replace(b"probabilities", b"prob\xffbilities"))
        x = np.zeros((1, 3, 32, 32), np.float32)
        with npu.Model(bad) as m, npu.Model(TINY) as good:
            self.assertEqual(m.outputs[0].name, "prob\ufffdbilities")
            out = m.run(x)
            self.assertEqual(list(out), ["prob\ufffdbilities"])
            self.assertEqual(out["prob\ufffdbilities"].tobytes(),
                             good.run(x)["probabilities"].tobytes())
            m.save(os.path.join(tmp, os.fsdecode(b"saved-\xfe.npum")))
        self.assertTrue(os.path.exists(os.path.join(tmp, os.fsdecode(b"saved-\xfe.npum"))))

    def test_run_time_shapes(self):
        model = os.path.join(ROOT, "tests/models/dynout/head_nonzero.onnx")
        tmp = tempfile.mkdtemp(prefix="npu-pytest-")
        x = np.random.default_rng(0).uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32)
        x.tofile(os.path.join(tmp, "x.raw"))
        subprocess.run([os.path.join(BUILD, "bin/npu-run"), model, "--cpu-fallback",
                        "--input", f"x={tmp}/x.raw", "--output-dir", tmp, "--iterations", "1",
                        "--warmup", "0"], check=True, stdout=subprocess.DEVNULL, env=plain_env())
        with npu.Model(model, allow_cpu_fallback=True) as m:
            self.assertEqual([o.shape for o in m.outputs], [(-1, 4), (-1,), (-1,), (-1,)])
            out = m.run(x)
            self.assertTrue(any(s.on_host and s.op for s in m.last_run.steps))
        k = out["scores"].shape[0]
        self.assertGreater(k, 0)
        self.assertEqual((out["boxes"].shape, out["idx"].dtype), ((k, 4), np.dtype(np.int64)))
        for name, a in out.items():
            with open(os.path.join(tmp, name + ".bin"), "rb") as f:
                self.assertEqual(a.tobytes(), f.read(), name)
        with self.assertRaises(npu.Error) as e:
            npu.Model(model)        # without the fallback: refused by name
        self.assertEqual(e.exception.status, npu.Status.UNSUPPORTED)
        self.assertIn("allow_cpu_fallback", e.exception.message)


class BlazeFace(unittest.TestCase):
    """MediaPipe's BlazeFace front model on the astronaut photo."""

    @classmethod
    def setUpClass(cls):
        cls.model = npu.Model(BLAZEFACE)
        (cls.info,) = cls.model.inputs
        cls.photo = np.fromfile(PHOTO, np.float32).reshape(cls.info.shape)
        cls.out = cls.model.run({cls.info.name: cls.photo})
        cls.c = CReference(BLAZEFACE, PHOTO, "--blazeface")

    @classmethod
    def tearDownClass(cls):
        cls.model.close()

    def test_outputs_match_c(self):
        self.assertEqual(self.info.shape, (1, 128, 128, 3))
        self.assertEqual(len(self.out), 4)
        for i, o in enumerate(self.model.outputs):
            got = self.out[o.name]
            self.assertEqual((got.dtype, got.shape), (np.dtype(np.float32), o.shape))
            self.assertEqual(got.tobytes(), self.c.output(i, o).tobytes(), o.name)
        self.assertEqual(self.model.last_run.device_cycles, self.c.cycles)

    def test_anchors_match_c(self):
        a = npu.anchors()
        self.assertEqual((a.dtype, a.shape), (np.dtype(np.float32), (896, 4)))
        np.testing.assert_array_equal(a.reshape(-1), hexfloats(self.c.lines["anchors"]))
        opts = npu.anchor_options()
        self.assertEqual((opts["num_layers"], opts["strides"]), (4, [8, 16, 16, 16]))
        # Options by name: one layer of stride 8 on 128x128 with two ratios.
        self.assertEqual(npu.anchors(strides=[8]).shape, (16 * 16 * 2, 4))

    def test_detect_matches_c(self):
        faces = npu.detect_blazeface(self.out)
        self.assertGreaterEqual(len(faces), 1)
        self.assertEqual([f._tuple() for f in faces], self.c.dets)
        f = faces[0]
        self.assertGreater(f.score, 0.9)
        self.assertEqual(len(f.keypoints), 6)
        x0, y0, x1, y1 = f.pixels(128, 128)
        self.assertTrue(0 <= x0 < x1 <= 128 and 0 <= y0 < y1 <= 128, (x0, y0, x1, y1))
        # A list in output order is the same as the dict.
        self.assertEqual(npu.detect_blazeface(list(self.out.values())), faces)

    def test_decode_and_nms(self):
        o = list(self.out.values())
        scores = np.concatenate([o[0].reshape(-1), o[1].reshape(-1)])
        boxes = np.concatenate([o[2].reshape(-1, 16), o[3].reshape(-1, 16)])
        raw = npu.decode_detections(boxes, scores, npu.anchors(), min_score_thresh=0.5)
        self.assertEqual(len(raw), int(self.c.lines["raw"][0]))
        self.assertEqual([d._tuple() for d in npu.nms(raw)], self.c.dets)
        hard = npu.nms(raw, algorithm="hard", iou_threshold=0.3)
        self.assertEqual(len(hard), len(self.c.dets))
        self.assertEqual(hard[0].score, max(d.score for d in raw))
        self.assertEqual(len(npu.nms(raw, max_detections=0)), 0)

    def test_post_errors(self):
        with self.assertRaises(npu.Error) as e:
            npu.decode_detections(np.zeros(16), np.zeros(1), npu.anchors()[:1], bogus=1)
        self.assertEqual(e.exception.status, npu.Status.INVALID_ARG)
        self.assertIn("no decode option named 'bogus'", e.exception.message)
        with self.assertRaises(npu.Error) as e:
            npu.decode_detections(np.zeros(4), np.zeros(1), npu.anchors()[:1])
        self.assertEqual(e.exception.status, npu.Status.SHAPE)
        with self.assertRaises(npu.Error) as e:
            npu.nms([], algorithm="soft")
        self.assertIn("weighted or hard", e.exception.message)
        with self.assertRaises(npu.Error) as e:
            npu.nms([], iou_threshold=2.0)
        self.assertEqual(e.exception.status, npu.Status.INVALID_ARG)
        self.assertTrue(e.exception.message)    # libnpu's sentence
        with self.assertRaises(npu.Error) as e:
            npu.detect_blazeface({"probabilities": np.zeros((1, 10), np.float32)})
        self.assertEqual(e.exception.status, npu.Status.SHAPE)
        self.assertIn("896", e.exception.message)


class Trace(unittest.TestCase):
    """Model.trace / write_trace: the C API's trace of the run, from Python."""

    def test_trace(self):
        import json
        path = os.path.join(tempfile.mkdtemp(prefix="npu-pytest-"), "t.json")
        with npu.Model(TINY) as m:
            x = np.zeros(m.inputs[0].shape, np.float32)
            with self.assertRaises(npu.Error) as e:
                m.write_trace(path)
            self.assertEqual(e.exception.status, npu.Status.NOT_FOUND)
            self.assertIn("npu_context_trace", e.exception.message)
            m.trace()
            m.run(x)
            m.write_trace(path)
            with open(path, encoding="utf-8") as f:
                t = json.load(f)
            steps = [e for e in t["traceEvents"] if e["ph"] == "X" and e["pid"] == 1]
            self.assertEqual(len(steps), len(m.last_run.steps))
            self.assertEqual(sum(e["args"]["device_cycles"] for e in steps),
                             m.last_run.device_cycles)
            self.assertGreater(t["otherData"]["spans"], 0)
            with self.assertRaises(npu.Error) as e:
                m.write_trace("/nonexistent/dir/t.json")
            self.assertEqual(e.exception.status, npu.Status.IO)
            m.trace(0)
            with self.assertRaises(npu.Error):
                m.write_trace(path)


class Errors(unittest.TestCase):
    """libnpu's own failures come through with their status and message."""

    def test_bad_path(self):
        with self.assertRaises(npu.Error) as e:
            npu.Model("/nonexistent/model.onnx")
        self.assertEqual(e.exception.status, npu.Status.IO)
        self.assertIn("/nonexistent/model.onnx", e.exception.message)

    def test_not_a_model(self):
        path = os.path.join(tempfile.mkdtemp(prefix="npu-pytest-"), "junk.onnx")
        with open(path, "wb") as f:
            f.write(b"this is no model\n" * 8)
        with self.assertRaises(npu.Error) as e:
            npu.Model(path)
        self.assertEqual(e.exception.status, npu.Status.FORMAT)
        self.assertTrue(e.exception.message)

    def test_bad_device(self):
        with self.assertRaises(npu.Error) as e:
            npu.Device("/dev/accel/accel99")
        self.assertIn(e.exception.status, (npu.Status.NO_DEVICE, npu.Status.INVALID_ARG))
        self.assertIn("accel99", e.exception.message)
        with self.assertRaises(npu.Error) as e:
            npu.Device("emu:clusters=99")
        self.assertEqual(e.exception.status, npu.Status.INVALID_ARG)

    def test_devices(self):
        devs = npu.devices()
        self.assertEqual(devs[-1].backend, "emu")
        self.assertEqual(devs[-1].path, "emu")
        with npu.Device("emu") as d:
            self.assertEqual((d.info.clusters, d.info.tpbs_per_cluster), (14, 4))
            self.assertGreater(d.info.clock_mhz, 0)

    def test_labels_missing(self):
        with self.assertRaises(npu.Error) as e:
            npu.Labels("/nonexistent/labels.txt")
        self.assertEqual(e.exception.status, npu.Status.IO)
        self.assertIn("/nonexistent/labels.txt", e.exception.message)

    def test_status_table(self):
        self.assertEqual(int(npu.Status.OK), 0)
        self.assertEqual(len(npu.Status), 18)
        e = npu.Error(npu.Status.TIMEOUT, "waited")
        self.assertEqual(str(e), "waited [TIMEOUT: timed out]")


class Examples(unittest.TestCase):
    """examples/python/: what they print is the C API's (npu-run, python-c-ref)."""

    def example(self, name, *args):
        env = dict(os.environ, NPU_EMU_STATS="0")
        return subprocess.run([PYTHON, os.path.join(ROOT, "examples/python", name), *args],
                              capture_output=True, text=True, env=env)

    def test_classify(self):
        x = np.sin(np.arange(3 * 32 * 32, dtype=np.float32) * 0.05).astype(np.float32)
        path = os.path.join(tempfile.mkdtemp(prefix="npu-pytest-"), "in.raw")
        x.tofile(path)
        for k in (1, 3, 10):
            ref = subprocess.run([os.path.join(BUILD, "bin/npu-run"), TINY, "--device", "emu",
                                  "--iterations", "1", "--warmup", "0", "--input",
                                  f"image={path}", "--top-k", str(k), "--labels", TINY_LABELS],
                                 check=True, capture_output=True, text=True,
                                 env=plain_env()).stdout
            # npu-run's "   1. class 3        0.146709  cat" as "1. class 3 0.146709 cat"
            want = [" ".join(w.split()) for w in ref.splitlines()
                    if len(w.split()) > 2 and w.split()[1] == "class"]
            got = self.example("classify.py", TINY, path, TINY_LABELS, str(k))
            self.assertEqual(got.returncode, 0, got.stderr)
            self.assertEqual(len(want), k)
            self.assertEqual([" ".join(w.split()) for w in got.stdout.splitlines()], want)

    def test_classify_errors(self):
        got = self.example("classify.py", "/nonexistent.onnx", TINY, TINY_LABELS)
        self.assertEqual(got.returncode, 1)
        self.assertIn("/nonexistent.onnx", got.stderr)
        self.assertIn("[IO: input/output error]", got.stderr)
        got = self.example("classify.py", TINY, TINY_LABELS, TINY_LABELS)
        self.assertEqual(got.returncode, 1)
        self.assertIn("the model's input takes 12288", got.stderr)
        self.assertNotIn("Traceback", got.stderr)

    def test_detect_faces(self):
        c = CReference(BLAZEFACE, PHOTO, "--blazeface")
        got = self.example("detect_faces.py", BLAZEFACE, PHOTO)
        self.assertEqual(got.returncode, 0, got.stderr)
        lines = got.stdout.splitlines()
        self.assertEqual(lines[0], f"{len(c.dets)} face{'' if len(c.dets) == 1 else 's'} in "
                         f"{PHOTO}:")
        for i, d in enumerate(c.dets):
            want = (f"  face {i + 1:2d}  score {d[4]:.4f}  x {d[0] * 128:.1f}-{d[2] * 128:.1f}"
                    f"  y {d[1] * 128:.1f}-{d[3] * 128:.1f}")
            self.assertTrue(lines[1 + i].startswith(want), (lines[1 + i], want))
        self.assertIn(f"({c.cycles} cycles, ", lines[-1])


class Install(unittest.TestCase):
    """make install DESTDIR=... gives an importable module that uses the staged libnpu."""

    def test_staged_install(self):
        dest = tempfile.mkdtemp(prefix="npu-pytest-install-")
        # A make of its own: the caller's jobserver descriptors are not passed on.
        env = plain_env()
        for v in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
            env.pop(v, None)
        subprocess.run(["make", "-s", "-C", ROOT, "install", f"DESTDIR={dest}",
                        f"BUILD={os.environ.get('NPU_BUILD', 'build')}", f"PYTHON={PYTHON}",
                        "PREFIX=/usr/local"], check=True, stdout=subprocess.DEVNULL, env=env)
        prefix = os.path.join(dest, "usr/local")
        for f in ("lib/libnpu.so.0", "lib/libnpu.a", "include/npu.h", "include/npu_post.h",
                  "lib/pkgconfig/npu.pc", "bin/npu-run", "bin/npu-top", "bin/npu-plan"):
            self.assertTrue(os.path.exists(os.path.join(prefix, f)), f)
        with open(os.path.join(prefix, "lib/pkgconfig/npu.pc")) as f:
            self.assertIn("prefix=/usr/local\n", f.read())
        ver = "%d.%d" % sys.version_info[:2]
        site = os.path.join(prefix, f"lib/python{ver}/dist-packages")
        code = ("import npu, numpy as np, sys\n"
                "m = npu.Model(sys.argv[1])\n"
                "p = m.run(np.zeros(m.inputs[0].shape, np.float32))['probabilities']\n"
                "libs = [l.split()[-1] for l in open('/proc/self/maps') if 'libnpu.so' in l]\n"
                "print(npu.__file__); print(libs[0]); print(p.shape)\n")
        env = dict(plain_env(), PYTHONPATH=site, LD_LIBRARY_PATH=os.path.join(prefix, "lib"))
        out = subprocess.run([PYTHON, "-c", code, TINY], env=env, cwd=dest, check=True,
                             capture_output=True, text=True).stdout.splitlines()
        self.assertEqual(out[0], os.path.join(site, "npu", "__init__.py"))
        self.assertEqual(os.path.realpath(out[1]),
                         os.path.realpath(os.path.join(prefix, "lib/libnpu.so.0")))
        self.assertEqual(out[2], "(1, 10)")


def main():
    for path in (C_REF, BLAZEFACE, PHOTO):
        if not os.path.exists(path):
            print(f"test_npu.py: {path} is missing: run it through 'make check-python', "
                  "which builds and fetches what it needs", file=sys.stderr)
            return 1
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    failed += len(result.skipped)      # nothing may be skipped
    print(f"{result.testsRun - failed} passed, {failed} failed")
    return 0 if result.wasSuccessful() and not result.skipped else 1


if __name__ == "__main__":
    sys.exit(main())
