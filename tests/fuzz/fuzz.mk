# libFuzzer target for the ONNX loader (issue 6).  Included by the top
# Makefile after libnpu/libnpu.mk; paths are relative to the repository
# root.
#
#   make check-fuzz               build build/fuzz/fuzz_onnx and run it for
#                                 FUZZ_TIME seconds (default 30)
#
# The target is built with clang (-fsanitize=fuzzer,address,undefined) from
# the libnpu sources, the device core and the generated protobuf code: the
# loader needs the IR and the ONNX parser, shape inference the operator
# registry (compile/npu_ops.c), whose lowerings reach the rest of the
# library.  Each source is an object under build/fuzz/obj.  The seed corpus is a few models of Debian's ONNX test data
# (libonnx-testdata); inputs libFuzzer finds accumulate in
# build/fuzz/corpus, crashes go to build/fuzz/artifacts.  One line reports
# the result; on a crash the log's tail follows and the target fails.

GEN       ?= $(BUILD)/gen
ONNX_PB_C ?= $(GEN)/onnx/onnx.pb-c.c

FUZZ_CC       ?= clang
FUZZ_TIME     ?= 30
FUZZ_DIR      := $(BUILD)/fuzz
FUZZ_ONNX     := $(FUZZ_DIR)/fuzz_onnx
FUZZ_TESTDATA ?= /usr/share/libonnx-testdata/data/node
FUZZ_SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1
FUZZ_SRCS     := tests/fuzz/fuzz_onnx.c $(LIBNPU_SRCS) $(CORE_SRCS)
FUZZ_OBJS     := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_SRCS))
FUZZ_HDRS     := $(LIBNPU_HDRS) $(ONNX_PB_H)
FUZZ_SEEDS    := conv_with_strides_padding convtranspose_pads gemm_all_attributes \
                 matmul_4d reshape_negative_dim slice_neg_steps resize_upsample_scales_linear \
                 qlinearconv maxpool_2d_ceil averagepool_2d_pads batchnorm_example \
                 layer_normalization_3d_axis1_epsilon split_variable_parts_2d constant_pad \
                 constantofshape_int_zeros shape_start_1 concat_3d_axis_1 unsqueeze_two_axes \
                 squeeze_negative_axes reduce_mean_keepdims_example quantizelinear_axis \
                 dequantizelinear softmax_axis_0 transpose_all_permutations_3 \
                 layer_normalization_2d_axis0_expanded
FUZZ_FLAGS    := -max_total_time=$(FUZZ_TIME) -rss_limit_mb=1024 -timeout=10 \
                 -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/artifacts/

# The generated code is compiled on its own: its warnings are protoc-c's.
$(FUZZ_DIR)/onnx.pb-c.o: $(ONNX_PB_C)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CSTD) -I$(GEN) -fsanitize=fuzzer-no-link $(FUZZ_SANFLAGS) -c $< -o $@

# Everything is held to every warning; clang does not know the device
# core's GCC-only diagnostic pragma, which must not stop it.
FUZZ_WARN := -Wall -Wextra -Werror
$(FUZZ_DIR)/obj/qemu-device/core/%.o: FUZZ_WARN += -Wno-unknown-warning-option

$(FUZZ_DIR)/obj/%.o: %.c $(FUZZ_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CSTD) $(FUZZ_WARN) -fsanitize=fuzzer-no-link $(FUZZ_SANFLAGS) \
	  $(INCS) $(LIBNPU_CFLAGS) -c $< -o $@

$(FUZZ_ONNX): $(FUZZ_OBJS) $(FUZZ_DIR)/onnx.pb-c.o
	@mkdir -p $(@D)
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SANFLAGS) $^ $(LIBNPU_LIBS) -o $@

.PHONY: fuzz check-fuzz
fuzz: $(FUZZ_ONNX)

check-fuzz: $(FUZZ_ONNX)
	@mkdir -p $(FUZZ_DIR)/seeds $(FUZZ_DIR)/corpus $(FUZZ_DIR)/artifacts
	@for s in $(FUZZ_SEEDS); do \
	  f=$(FUZZ_TESTDATA)/test_$$s/model.onnx; cp $$f $(FUZZ_DIR)/seeds/$$s.onnx || \
	  { echo "check-fuzz: no seed $$f: install Debian's libonnx-testdata (make deps)" >&2; exit 1; }; \
	done
	@log=$(FUZZ_DIR)/fuzz_onnx.log; \
	ASAN_OPTIONS=detect_leaks=1 $(FUZZ_ONNX) $(FUZZ_FLAGS) $(FUZZ_DIR)/corpus $(FUZZ_DIR)/seeds >$$log 2>&1; rc=$$?; \
	runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $$log); \
	cov=$$(grep -o 'cov: [0-9]*' $$log | tail -1); \
	corp=$$(ls $(FUZZ_DIR)/corpus | wc -l); \
	if [ $$rc -eq 0 ]; then \
	  echo "fuzz_onnx: $${runs:-?} runs in $(FUZZ_TIME) s, no crash ($$cov edges, corpus $$corp inputs)"; \
	else \
	  echo "fuzz_onnx: FAILED (exit $$rc) after $${runs:-?} runs: see $$log and $(FUZZ_DIR)/artifacts/"; \
	  tail -40 $$log; exit 1; \
	fi
