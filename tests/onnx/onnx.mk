# make check-onnx: the ONNX node conformance cases of Debian's
# libonnx-testdata through libnpu on the emulator backend (tests/onnx/).
CHECK_ONNX_BIN := $(BUILD)/tests/check-onnx

$(CHECK_ONNX_BIN): tests/onnx/check_onnx.c tests/onnx/onnx_case.c tests/onnx/onnx_case.h $(LIBNPU_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(LIBNPU_CFLAGS) $(OPTFLAGS) -Itests/onnx tests/onnx/check_onnx.c \
	  tests/onnx/onnx_case.c $(LIBNPU_A) $(LIBNPU_LIBS) -o $@

.PHONY: check-onnx
check-onnx: $(CHECK_ONNX_BIN) $(ONNX_TESTDATA)
	NPU_EMU_STATS=0 $(CHECK_ONNX_BIN)
	@echo "check-onnx with the CPU fallback on (issue 17; the whole list: $(BUILD)/check-onnx-fallback.txt):"
	@NPU_EMU_STATS=0 NPU_ONNX_CPU_FALLBACK=1 $(CHECK_ONNX_BIN) > $(BUILD)/check-onnx-fallback.txt || \
	  { cat $(BUILD)/check-onnx-fallback.txt; exit 1; }
	@grep -E '^(host |CPU fallback on|[0-9]+ passed, )' $(BUILD)/check-onnx-fallback.txt
