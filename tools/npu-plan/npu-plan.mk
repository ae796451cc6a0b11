# npu-plan: the scheduler's cost model on the command line.  Included by
# the top Makefile; the model itself is in libnpu (libnpu/src/plan).

NPU_PLAN_BIN := $(BUILD)/bin/npu-plan

all: $(NPU_PLAN_BIN)

$(NPU_PLAN_BIN): tools/npu-plan/main.c libnpu/src/plan/npu_plan.h $(TOOLS_COMMON_SRCS) \
		$(TOOLS_COMMON_HDRS) $(LIBNPU_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(LIBNPU_CFLAGS) $(TOOLS_COMMON_CFLAGS) $(OPTFLAGS) \
	  tools/npu-plan/main.c $(TOOLS_COMMON_SRCS) \
	  $(LIBNPU_A) $(LIBNPU_LIBS) -o $@
