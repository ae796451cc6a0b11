# npu-run: run a model on the NPU and report latency, throughput, simulated
# time and a profile (trtexec-like).  Included by the top Makefile; built on
# libnpu's public API only.  samples/ holds the test model and its generator,
# which are not part of the tool.

NPU_RUN_BIN  := $(BUILD)/bin/npu-run
NPU_RUN_SRCS := $(sort $(wildcard tools/npu-run/*.c))
NPU_RUN_HDRS := $(wildcard tools/npu-run/*.h)
# Pictures as inputs and --draw: libpng and libjpeg (make deps: IMAGE_PACKAGES).
NPU_RUN_IMAGE_CFLAGS := $(shell pkg-config --cflags libpng libjpeg 2>/dev/null)
NPU_RUN_IMAGE_LIBS   := $(or $(shell pkg-config --libs libpng libjpeg 2>/dev/null),-lpng16 -ljpeg)

all: $(NPU_RUN_BIN)

$(NPU_RUN_BIN): $(NPU_RUN_SRCS) $(NPU_RUN_HDRS) $(TOOLS_COMMON_SRCS) $(TOOLS_COMMON_HDRS) \
		$(wildcard libnpu/include/*.h) $(LIBNPU_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(LIBNPU_CFLAGS) $(TOOLS_COMMON_CFLAGS) $(NPU_RUN_IMAGE_CFLAGS) \
	  $(OPTFLAGS) $(NPU_RUN_SRCS) $(TOOLS_COMMON_SRCS) \
	  $(LIBNPU_A) $(LIBNPU_LIBS) $(NPU_RUN_IMAGE_LIBS) -lm -o $@

# The same with ASan/UBSan, for the bad-input cases of tests/tools/npu-image.sh
# (libpng's and libjpeg's error paths): libnpu itself is the optimised one.
NPU_RUN_SAN_BIN := $(BUILD)/bin/npu-run-san

$(NPU_RUN_SAN_BIN): $(NPU_RUN_SRCS) $(NPU_RUN_HDRS) $(TOOLS_COMMON_SRCS) $(TOOLS_COMMON_HDRS) \
		$(wildcard libnpu/include/*.h) $(LIBNPU_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(LIBNPU_CFLAGS) $(TOOLS_COMMON_CFLAGS) $(NPU_RUN_IMAGE_CFLAGS) \
	  -O1 $(SANFLAGS) $(NPU_RUN_SRCS) $(TOOLS_COMMON_SRCS) \
	  $(LIBNPU_A) $(LIBNPU_LIBS) $(NPU_RUN_IMAGE_LIBS) -lm -o $@

# tests/tools/npu-trace.sh traces BlazeFace: fetched first (make models).
check-tools: $(NPU_RUN_BIN) $(NPU_RUN_SAN_BIN) $(BLAZEFACE)
