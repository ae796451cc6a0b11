# npu-run and npu-top for the guest (static), the sample model, BlazeFace
# (with its test photo) and the BERT-style transformer test model, and the
# outputs the emulator backend gives for them on the host, which the guest's
# npu-guest-tools checks bit for bit against the driver's.  For
# npu-guest-generate: the decoders exported with past, onnxruntime's greedy
# ids for them (tests/models/ort_generate.js) and the emulator backend's
# simulated cycles for the same generations.
# build/guest/usr/ becomes /usr in the initramfs (mkinitramfs.sh).

GUEST_USR       := $(BUILD)/guest/usr
GUEST_NPU_RUN   := $(GUEST_USR)/bin/npu-run
GUEST_NPU_TOP   := $(GUEST_USR)/bin/npu-top
GUEST_SAMPLE    := $(GUEST_USR)/share/npu/tiny-cnn.onnx
GUEST_EXPECT    := $(GUEST_USR)/share/npu/expect/probabilities.bin
GUEST_TOOLS_TEST := $(BUILD)/guest/bin/npu-guest-tools
GUEST_BF_DIR    := $(GUEST_USR)/share/npu/blazeface
GUEST_BF        := $(GUEST_BF_DIR)/model.onnx $(GUEST_BF_DIR)/photo.raw
GUEST_BF_EXPECT := $(GUEST_BF_DIR)/expect/stamp
GUEST_TF_DIR    := $(GUEST_USR)/share/npu/bert
GUEST_TF_EXPECT := $(GUEST_TF_DIR)/expect/stamp
# The shapes the guest's run gives it (npu-guest-tools.sh: keep them equal).
GUEST_TF_SHAPES := --shape input_ids=1x16 --shape attention_mask=1x16 --shape token_type_ids=1x16

# No libcurl in a static binary: tests/guest/tools/no_http.c stands in for
# the HTTP transport (file:// URLs and paths still work).
$(GUEST_NPU_RUN): $(NPU_RUN_SRCS) $(NPU_RUN_HDRS) $(TOOLS_COMMON_SRCS) $(TOOLS_COMMON_HDRS) \
		tests/guest/tools/no_http.c $(LIBNPU_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(LIBNPU_CFLAGS) $(TOOLS_COMMON_CFLAGS) $(NPU_RUN_IMAGE_CFLAGS) \
	  $(OPTFLAGS) -static $(NPU_RUN_SRCS) $(TOOLS_COMMON_SRCS) \
	  tests/guest/tools/no_http.c $(LIBNPU_A) -ldrm -lprotobuf-c -lcrypto -lpng16 -lz -ljpeg -lm \
	  -pthread -o $@

$(GUEST_NPU_TOP): $(NPU_TOP_SRCS) $(NPU_TOP_HDRS) $(TOOLS_COMMON_SRCS) $(TOOLS_COMMON_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(OPTFLAGS) -Iuapi $(TOOLS_COMMON_CFLAGS) $(NPU_TOP_CURSES_CFLAGS) \
	  -static $(NPU_TOP_SRCS) $(TOOLS_COMMON_SRCS) -lncursesw -ltinfo -lm -o $@

$(GUEST_SAMPLE): tools/npu-run/samples/tiny-cnn.onnx
	@mkdir -p $(@D)
	cp $< $@

# The emulator's outputs for npu-run's deterministic input.
$(GUEST_EXPECT): tools/npu-run/samples/tiny-cnn.onnx $(NPU_RUN_BIN)
	@mkdir -p $(@D)
	NPU_EMU_STATS=0 $(NPU_RUN_BIN) $< --device emu --iterations 1 --warmup 0 \
	  --output-dir $(@D) >/dev/null

$(GUEST_BF_DIR)/model.onnx: $(BLAZEFACE)
	@mkdir -p $(@D)
	cp $< $@

$(GUEST_BF_DIR)/photo.raw: $(FACE_PHOTO)
	@mkdir -p $(@D)
	cp $< $@

# BlazeFace's four outputs on the photo, and the faces decoded from them.
$(GUEST_BF_EXPECT): $(GUEST_BF) $(NPU_RUN_BIN)
	@rm -rf $(@D) && mkdir -p $(@D)
	NPU_EMU_STATS=0 $(NPU_RUN_BIN) $(GUEST_BF_DIR)/model.onnx --device emu --iterations 1 \
	  --warmup 0 --input input:0=$(GUEST_BF_DIR)/photo.raw --output-dir $(@D) >/dev/null
	$(NPU_RUN_BIN) $(GUEST_BF_DIR)/model.onnx --detect blazeface --detect-from $(@D) \
	  | grep '^  face' >$(@D)/faces.txt
	touch $@

$(GUEST_TF_DIR)/model.onnx: tests/models/transformers/bert_tiny_op14.onnx
	@mkdir -p $(@D)
	cp $< $@

# The encoder's outputs for npu-run's deterministic int64 inputs.
$(GUEST_TF_EXPECT): $(GUEST_TF_DIR)/model.onnx $(NPU_RUN_BIN)
	@rm -rf $(@D) && mkdir -p $(@D)
	NPU_EMU_STATS=0 $(NPU_RUN_BIN) $< --device emu --iterations 1 --warmup 0 $(GUEST_TF_SHAPES) \
	  --output-dir $(@D) >/dev/null
	touch $@

# A real model nobody here wrote (issue 17): openWakeWord's speech
# embedding, its open batch dim taken from the raw input's size (4 windows
# of a synthetic mel spectrogram, written here); the emulator's outputs on
# the host, which the guest's run through the driver must equal bit for bit
# (make check-models checks them against onnxruntime).
GUEST_OWW_DIR    := $(GUEST_USR)/share/npu/oww
GUEST_OWW        := $(GUEST_OWW_DIR)/model.onnx $(GUEST_OWW_DIR)/input_1.bin
GUEST_OWW_EXPECT := $(GUEST_OWW_DIR)/expect/stamp

$(GUEST_OWW_DIR)/model.onnx: $(OWW_EMBED)
	@mkdir -p $(@D)
	cp $< $@

$(GUEST_OWW_DIR)/input_1.bin:
	@mkdir -p $(@D)
	python3 -c 'import math, struct, sys; sys.stdout.buffer.write(struct.pack("<9728f", \
	  *[2.5 * math.sin(0.3 * m + 0.11 * t + w) + 0.5 * math.cos(0.07 * m * t) \
	    for w in range(4) for t in range(76) for m in range(32)]))' >$@

$(GUEST_OWW_EXPECT): $(GUEST_OWW) $(NPU_RUN_BIN)
	@rm -rf $(@D) && mkdir -p $(@D)
	NPU_EMU_STATS=0 $(NPU_RUN_BIN) $(GUEST_OWW_DIR)/model.onnx --device emu --iterations 1 \
	  --warmup 0 --input input_1=$(GUEST_OWW_DIR)/input_1.bin --output-dir $(@D) >/dev/null 2>&1
	touch $@

# A host step through the driver (issue 17): Conv -> Det -> Add exported by
# PyTorch (tests/guest/hoststep/gen.py), run with --cpu-fallback so that
# the Det runs on the CPU between the Conv's and the Add's programs, on the
# kernel backend's mmapped BOs in the guest; the emulator's output on the
# host, which the guest's must equal bit for bit.
GUEST_HS_DIR    := $(GUEST_USR)/share/npu/hoststep
GUEST_HS_EXPECT := $(GUEST_HS_DIR)/expect/stamp

$(GUEST_HS_DIR)/model.onnx: tests/guest/hoststep/conv_det_add.onnx
	@mkdir -p $(@D)
	cp $< $@

$(GUEST_HS_EXPECT): $(GUEST_HS_DIR)/model.onnx $(NPU_RUN_BIN)
	@rm -rf $(@D) && mkdir -p $(@D)
	NPU_EMU_STATS=0 $(NPU_RUN_BIN) $< --device emu --cpu-fallback --iterations 1 --warmup 0 \
	  --output-dir $(@D) >/dev/null
	touch $@

# Generation (npu-guest-generate.sh: its RUNS name the models and prompts).
GUEST_GEN_DIR    := $(GUEST_USR)/share/npu/generate
GUEST_GEN_TEST   := $(BUILD)/guest/bin/npu-guest-generate
GUEST_GEN_MODELS := $(addprefix $(GUEST_GEN_DIR)/,gpt2_past_op17.onnx llama_past_op17.onnx \
	llama_past_ext_op17.onnx llama_past_ext.onnx.data)
GUEST_GEN_REF    := $(GUEST_GEN_DIR)/ref/stamp
GUEST_GEN_EXPECT := $(GUEST_GEN_DIR)/expect/stamp
# The defect masks run.sh boots with (default, fused-2, fused-corner): the
# simulated cycles depend on which clusters a program runs on.
GUEST_GEN_MASKS  := 0x0 0x0081 0x2400

$(GUEST_GEN_MODELS): $(GUEST_GEN_DIR)/%: $(TF_DIR)/%
	@mkdir -p $(@D)
	cp $< $@

# onnxruntime's ids on the host (its own checks included: the cache grows a
# position a step, the first steps equal a full recompute, the external-data
# LLaMA equals the other bit for bit); only the .json files go to the guest.
$(GUEST_GEN_REF): tests/models/ort_generate.js $(GEN_MODELS) $(TF_DIR)/llama_past_ext.onnx.data \
		$(ORT_NODE)
	@rm -rf $(BUILD)/guest/ort-generate $(@D) && mkdir -p $(@D)
	@node tests/models/ort_generate.js $(TF_DIR) $(BUILD)/guest/ort-generate \
	  >$(BUILD)/guest/ort-generate.log || { cat $(BUILD)/guest/ort-generate.log; exit 1; }
	cp $(BUILD)/guest/ort-generate/*.json $(@D)/
	touch $@

# The same generations on the emulator backend, once per defect mask.
$(GUEST_GEN_EXPECT): tests/guest/tools/npu-guest-generate.sh $(GUEST_GEN_MODELS) $(GUEST_GEN_REF) \
		$(NPU_RUN_BIN)
	@rm -rf $(@D)
	tests/guest/tools/npu-guest-generate.sh --expect $(@D) $(GUEST_GEN_DIR)/ref $(GUEST_GEN_DIR) \
	  $(NPU_RUN_BIN) $(GUEST_GEN_MASKS)
	touch $@

$(GUEST_GEN_TEST): tests/guest/tools/npu-guest-generate.sh
	@mkdir -p $(@D)
	cp $< $@
	chmod +x $@

$(GUEST_TOOLS_TEST): tests/guest/tools/npu-guest-tools.sh
	@mkdir -p $(@D)
	cp $< $@
	chmod +x $@

.PHONY: guest-tools
guest-tools: $(GUEST_NPU_RUN) $(GUEST_NPU_TOP) $(GUEST_SAMPLE) $(GUEST_EXPECT) $(GUEST_TOOLS_TEST) \
	$(GUEST_BF_EXPECT) $(GUEST_TF_EXPECT) $(GUEST_GEN_TEST) $(GUEST_GEN_EXPECT) $(GUEST_OWW_EXPECT) \
	$(GUEST_HS_EXPECT)
