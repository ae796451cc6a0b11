# Real models end to end (tests/models): `make models` fetches them and the
# reference engine from the npm registry into the cache; `make check-models`
# runs BlazeFace through libnpu on the emulator against onnxruntime (and on
# the photo as PNG and JPEG, with --draw: npu_run_image.sh), and the
# committed transformer test models through onnxruntime, libnpu's parser and
# (those the compiler takes) npu-run against onnxruntime, the quantised
# weights (the MatMulNBits models, the transformers at --precision w8), and
# onnxruntime's greedy generation with the decoders exported with past (the
# reference ids and logits, in $(BUILD)/models-ref/generate) against libnpu's
# generation sessions (generate_test.c), the real models of
# tests/models/README.md from the npm registry against onnxruntime
# (ort_realmodels.js, npu_run_realmodels.sh), with the first refusal of
# those libnpu does not run yet (try_realmodels.sh, informational), and the
# recurrent test models (tests/models/recurrent: an LSTM and a GRU exported
# by PyTorch) over four frames with the state carried, against onnxruntime,
# and the control-flow test models (tests/models/control: a Loop and an If
# exported from torch.jit.script) on every path, against onnxruntime, and
# the run-time output size models (tests/models/dynout: boolean
# indexing, torch.nonzero and torch.unique as PyTorch exports them, an NMS
# tail) through npu-run --cpu-fallback against onnxruntime, and the kernel
# CI's host-step model (tests/guest/hoststep) likewise.
# The cache fetch.sh fills; the tests that read it are given it as
# NPU_CACHE (make check-unit), so make and the tests agree on one place.
NPU_CACHE_DIR := $(or $(NPU_CACHE),$(HOME)/.cache/npu)
MODELS_DIR  := $(NPU_CACHE_DIR)/models
BLAZEFACE   := $(MODELS_DIR)/face_detection_front_128x128_barracuda.onnx
# openWakeWord's speech embedding (tf2onnx, input float32[?,76,32,1]), from
# the npm registry (fetch.sh; tests/models/README.md).
OWW_EMBED   := $(MODELS_DIR)/embedding_model.onnx
FACE_PHOTO  := $(MODELS_DIR)/astronaut-128.raw
MODEL_TEST  := $(BUILD)/tests/model-test
TF_DIR      := tests/models/transformers
TF_MODELS   := $(foreach m,bert gpt2 llama vit,$(foreach o,14 17,$(TF_DIR)/$(m)_tiny_op$(o).onnx))
TF_PAST     := $(TF_DIR)/gpt2_past_op17.onnx $(TF_DIR)/llama_past_op17.onnx
TF_PARSE    := $(BUILD)/tests/transformer-parse-test
GEN_TEST    := $(BUILD)/tests/generate-test
GEN_MODELS  := $(TF_PAST) $(TF_DIR)/llama_past_ext_op17.onnx
TF_PACKAGES := python3-torch python3-onnx
NB_DIR      := tests/models/nbits
NB_PACKAGES := python3-onnx python3-numpy
RNN_DIR     := tests/models/recurrent
CTL_DIR     := tests/models/control
DYN_DIR     := tests/models/dynout

.PHONY: models check-models transformer-models nbits-models recurrent-models control-models dynout-models
# After the file rule below when both are wanted (make -j check: check-unit
# needs $(BLAZEFACE), check-models this), so that fetch.sh never runs twice
# at once on the same cache; the second run finds everything and returns.
models: $(BLAZEFACE)
	@tests/models/fetch.sh

# onnxruntime-node, the reference engine the node scripts load.
ORT_NODE    := $(NPU_CACHE_DIR)/ort/node_modules/onnxruntime-node/package.json

# Files other rules use (check-unit, the guest's copies and references):
# fetched on demand, by one run of fetch.sh for all of them (a grouped
# target: make -j runs the recipe once, not once per file wanted).
$(BLAZEFACE) $(FACE_PHOTO) $(ORT_NODE) $(OWW_EMBED) &:
	@tests/models/fetch.sh

$(MODEL_TEST): tests/models/model_test.c $(LIBNPU_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -Ilibnpu/include $(OPTFLAGS) $< $(LIBNPU_A) $(LIBNPU_LIBS) -o $@

$(GEN_TEST): tests/models/generate_test.c $(LIBNPU_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -Ilibnpu/include $(OPTFLAGS) $< $(LIBNPU_A) $(LIBNPU_LIBS) -o $@

$(TF_PARSE): $(TF_DIR)/parse_test.c $(LIBNPU_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(LIBNPU_CFLAGS) $(OPTFLAGS) $< $(LIBNPU_A) $(LIBNPU_LIBS) -o $@

# Regenerate the committed transformer test models (byte for byte): installs
# Debian's torch and onnx (root; once), then runs the generator.  Not part
# of any check: the .onnx files are committed so that tests need no torch.
transformer-models:
	@missing=""; for p in $(TF_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "transformer-models: installing$$missing"; \
	  apt-get update -qq && apt-get install -y -q $$missing || exit 1; \
	fi
	/usr/bin/python3 $(TF_DIR)/gen.py $(TF_DIR)

# Regenerate the committed recurrent test models (byte for byte; Debian's
# torch, installed by transformer-models).  Not part of any check.
recurrent-models:
	/usr/bin/python3 $(RNN_DIR)/gen.py $(RNN_DIR)
	/usr/bin/python3 $(RNN_DIR)/gen_nodes.py $(RNN_DIR)

# Regenerate the committed control-flow test models (byte for byte, as above).
control-models:
	/usr/bin/python3 $(CTL_DIR)/gen.py $(CTL_DIR)

# The npu-run rule lives in tools/, included after this file: name the
# target literally.
check-models: models $(MODEL_TEST) $(TF_PARSE) $(GEN_TEST) $(BUILD)/bin/npu-run $(BUILD)/bin/npu-run-san
	@rm -rf $(BUILD)/models-ref && mkdir -p $(BUILD)/models-ref/face
	@node tests/models/ort_ref.js $(BLAZEFACE) $(BUILD)/models-ref
	@node tests/models/ort_ref.js $(BLAZEFACE) $(BUILD)/models-ref/face 1 $(FACE_PHOTO)
	@$(MODEL_TEST) $(BLAZEFACE) $(BUILD)/models-ref
	@tests/models/npu_run_blazeface.sh $(BLAZEFACE) $(FACE_PHOTO) $(BUILD)/models-ref/face \
		$(BUILD)/bin/npu-run
	@tests/models/npu_run_image.sh $(BLAZEFACE) $(MODELS_DIR) $(BUILD)/bin/npu-run \
		$(BUILD)/bin/npu-run-san
	@rm -rf $(BUILD)/models-ref/transformers && mkdir -p $(BUILD)/models-ref/transformers
	@node tests/models/ort_transformers.js $(TF_DIR) $(BUILD)/models-ref/transformers
	@$(TF_PARSE) $(TF_MODELS) $(TF_PAST)
	@tests/models/npu_run_transformers.sh $(TF_DIR) $(BUILD)/models-ref/transformers \
		$(BUILD)/bin/npu-run
	@rm -rf $(BUILD)/models-ref/nbits && mkdir -p $(BUILD)/models-ref/nbits
	@node tests/models/ort_nbits.js $(NB_DIR) $(BUILD)/models-ref/nbits
	@tests/models/npu_run_quant.sh $(NB_DIR) $(BUILD)/models-ref/nbits $(TF_DIR) \
		$(BUILD)/models-ref/transformers $(BUILD)/bin/npu-run
	@node tests/models/ort_generate.js $(TF_DIR) $(BUILD)/models-ref/generate
	@$(GEN_TEST) $(BUILD)/models-ref/generate $(GEN_MODELS)
	@rm -rf $(BUILD)/models-ref/real && mkdir -p $(BUILD)/models-ref/real
	@node tests/models/ort_realmodels.js $(MODELS_DIR) $(BUILD)/models-ref/real
	@tests/models/npu_run_realmodels.sh $(MODELS_DIR) $(BUILD)/models-ref/real $(BUILD)/bin/npu-run
	@tests/models/try_realmodels.sh $(MODELS_DIR) $(BUILD)/bin/npu-run
	@rm -rf $(BUILD)/models-ref/recurrent && mkdir -p $(BUILD)/models-ref/recurrent
	@node tests/models/ort_recurrent.js $(RNN_DIR) $(BUILD)/models-ref/recurrent
	@tests/models/npu_run_recurrent.sh $(RNN_DIR) $(BUILD)/models-ref/recurrent $(BUILD)/bin/npu-run
	@rm -rf $(BUILD)/models-ref/control && mkdir -p $(BUILD)/models-ref/control
	@node tests/models/ort_control.js $(CTL_DIR) $(BUILD)/models-ref/control
	@tests/models/npu_run_control.sh $(CTL_DIR) $(BUILD)/models-ref/control $(BUILD)/bin/npu-run
	@rm -rf $(BUILD)/models-ref/dynout && mkdir -p $(BUILD)/models-ref/dynout
	@node tests/models/ort_dynout.js $(DYN_DIR) $(BUILD)/models-ref/dynout
	@tests/models/npu_run_dynout.sh $(DYN_DIR) $(BUILD)/models-ref/dynout $(BUILD)/bin/npu-run
	@rm -rf $(BUILD)/models-ref/hoststep && mkdir -p $(BUILD)/models-ref/hoststep
	@node tests/models/ort_hoststep.js tests/guest/hoststep/conv_det_add.onnx $(BUILD)/models-ref/hoststep
	@tests/models/npu_run_hoststep.sh tests/guest/hoststep/conv_det_add.onnx $(BUILD)/models-ref/hoststep $(BUILD)/bin/npu-run

# Regenerate the committed run-time output size test models (byte for byte;
# Debian's torch and onnx, installed by transformer-models).  Not part of any check.
dynout-models:
	/usr/bin/python3 $(DYN_DIR)/gen.py $(DYN_DIR)

# Regenerate the committed MatMulNBits test models (byte for byte; no torch):
# installs Debian's onnx and numpy (root; once), then runs the generator.
nbits-models:
	@missing=""; for p in $(NB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "nbits-models: installing$$missing"; \
	  apt-get update -qq && apt-get install -y -q $$missing || exit 1; \
	fi
	/usr/bin/python3 $(NB_DIR)/gen.py $(NB_DIR)
