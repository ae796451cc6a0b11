# npu-run: run a model on the NPU and report latency, throughput, simulated
# time and a profile (trtexec-like).  Included by the top Makefile; built on
# libnpu's public API only.  samples/ holds the test model and its generator,
# which are not part of the tool.

NPU_RUN_BIN  := $(BUILD)/bin/npu-run
NPU_RUN_SRCS := $(sort $(wildcard tools/npu-run/*.c))
NPU_RUN_HDRS := $(wildcard tools/npu-run/*.h)

all: $(NPU_RUN_BIN)

$(NPU_RUN_BIN): $(NPU_RUN_SRCS) $(NPU_RUN_HDRS) $(wildcard libnpu/include/*.h) $(LIBNPU_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(LIBNPU_CFLAGS) $(OPTFLAGS) $(NPU_RUN_SRCS) \
	  $(LIBNPU_A) $(LIBNPU_LIBS) -o $@

# tests/tools/npu-trace.sh traces BlazeFace: fetched first (make models).
check-tools: $(NPU_RUN_BIN) $(BLAZEFACE)
