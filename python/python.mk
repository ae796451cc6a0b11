# The Python module npu (python/): a C extension over libnpu.so
# (python/_npu/, npu._npu) and the Python half that gives it numpy shapes
# (python/npu/).  Included by the top Makefile; paths relative to the root.
# Documentation/python.md says why a C extension and not ctypes.
#
# Debian's interpreter, which has python3-numpy (a python3 earlier in PATH,
# e.g. pyenv's, may not).  Override with PYTHON=...
PYTHON        ?= /usr/bin/python3
# One interpreter start: its headers, extension suffix and version.
PY_CONFIG     := $(shell $(PYTHON) -c 'import sys, sysconfig; print(sysconfig.get_paths()["include"], \
                   sysconfig.get_config_var("EXT_SUFFIX"), "%d.%d" % sys.version_info[:2])' 2>/dev/null)
PY_INCLUDE    := $(word 1,$(PY_CONFIG))
PY_EXT_SUFFIX := $(or $(word 2,$(PY_CONFIG)),.so)
PY_VERSION    := $(word 3,$(PY_CONFIG))

PY_SRCS   := $(sort $(wildcard python/_npu/*.c))
PY_OBJS   := $(patsubst python/_npu/%.c,$(BUILD)/obj/python/%.o,$(PY_SRCS))
PY_FILES  := $(sort $(wildcard python/npu/*.py))
PY_DIR    := $(BUILD)/python
# In the tree: found by PYTHONPATH=build/python; its RUNPATH finds
# build/lib/libnpu.so.0, so no LD_LIBRARY_PATH is needed.
PY_EXT    := $(PY_DIR)/npu/_npu$(PY_EXT_SUFFIX)
# The copy make install puts in the site directory: no RUNPATH (libnpu is
# in $(PREFIX)/lib, on the loader's path).
PY_EXT_INSTALL := $(BUILD)/python-install/_npu$(PY_EXT_SUFFIX)
PY_TARGETS := $(PY_EXT) $(PY_EXT_INSTALL) $(patsubst python/npu/%,$(PY_DIR)/npu/%,$(PY_FILES))
# The same module with the extension under ASan/UBSan, for check-python
# (python runs it with the sanitizer runtimes preloaded).
PY_SAN_DIR := $(BUILD)/python-san
PY_SAN_EXT := $(PY_SAN_DIR)/npu/_npu$(PY_EXT_SUFFIX)
PY_SAN_TARGETS := $(PY_SAN_EXT) $(patsubst python/npu/%,$(PY_SAN_DIR)/npu/%,$(PY_FILES))

# Where make install puts the module: Debian's dist-packages for the
# prefix (/usr: the distribution's own, /usr/local and others: the
# interpreter's local one, on sys.path for /usr/local).  Override with
# PYTHON_SITEDIR=...
PYTHON_SITEDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(PY_VERSION)/dist-packages)

.PHONY: python check-python
all: python
python: $(PY_TARGETS)

$(BUILD)/obj/python/%.o: python/_npu/%.c python/_npu/npuext.h $(wildcard libnpu/include/*.h)
	@test -f "$(PY_INCLUDE)/Python.h" || { echo "Python.h not found ($(PY_INCLUDE)): run 'make deps' (python3-dev)"; exit 1; }
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -fvisibility=hidden -O2 -Ilibnpu/include -isystem $(PY_INCLUDE) -c $< -o $@

$(PY_EXT): $(PY_OBJS) $(LIBNPU_SO)
	@mkdir -p $(@D)
	$(CC) -shared $(PY_OBJS) -L$(BUILD)/lib -lnpu -Wl,-rpath,'$$ORIGIN/../../lib' -o $@

$(PY_EXT_INSTALL): $(PY_OBJS) $(LIBNPU_SO)
	@mkdir -p $(@D)
	$(CC) -shared $(PY_OBJS) -L$(BUILD)/lib -lnpu -o $@

$(PY_SAN_EXT): $(PY_SRCS) python/_npu/npuext.h $(LIBNPU_SO)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -O1 $(SANFLAGS) -Ilibnpu/include -isystem $(PY_INCLUDE) -shared \
	  $(PY_SRCS) -L$(BUILD)/lib -lnpu -Wl,-rpath,'$$ORIGIN/../../lib' -o $@

# Two rules: one pattern rule with two targets is a grouped target to make
# (one run makes both), so a fresh build dir got no copies in python-san.
$(PY_DIR)/npu/%.py: python/npu/%.py
	@mkdir -p $(@D)
	cp $< $@

$(PY_SAN_DIR)/npu/%.py: python/npu/%.py
	@mkdir -p $(@D)
	cp $< $@

# The Python tests (tests/python/): the same models through the C API
# (python-c-ref, c_ref.c) and through the module, compared exactly, and a
# staged make install; then the example.
PY_C_REF := $(BUILD)/tests/python-c-ref

$(PY_C_REF): tests/python/c_ref.c $(LIBNPU_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -Ilibnpu/include $(OPTFLAGS) $< $(LIBNPU_A) $(LIBNPU_LIBS) -o $@

# Twice: the module as built, then with its extension under ASan/UBSan
# (CPython's own allocations at exit are no leaks of ours: detect_leaks=0).
PY_TEST_ENV = NPU_BUILD=$(BUILD) NPU_PYTHON=$(PYTHON) NPU_C_REF=$(PY_C_REF) \
	NPU_BLAZEFACE=$(BLAZEFACE) NPU_FACE_PHOTO=$(FACE_PHOTO) NPU_EMU_STATS=0
# (npu-run by path: tools/*/*.mk, which name it, are included after this file.)
check-python: python $(PY_SAN_TARGETS) $(PY_C_REF) $(BLAZEFACE) $(FACE_PHOTO) $(BUILD)/bin/npu-run
	@$(PYTHON) -c 'import numpy' 2>/dev/null || { echo "check-python: $(PYTHON) has no numpy: run 'make deps' (python3-numpy)"; exit 1; }
	@$(PY_TEST_ENV) PYTHONPATH=$(PY_DIR) $(PYTHON) tests/python/test_npu.py
	@echo "tests/python/test_npu.py with the extension under ASan/UBSan:"
	@$(PY_TEST_ENV) PYTHONPATH=$(PY_SAN_DIR) ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1 \
	  LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
	  $(PYTHON) tests/python/test_npu.py
	@echo "examples/python/detect_faces.py (also checked by test_npu.py):"
	@PYTHONPATH=$(PY_DIR) $(PYTHON) examples/python/detect_faces.py $(BLAZEFACE) $(FACE_PHOTO)
