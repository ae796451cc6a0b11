// SPDX-License-Identifier: MIT
/*
 * A slice of the ONNX conformance cases (Debian's libonnx-testdata), under
 * ASan/UBSan: each must pass (tests/onnx/onnx_case.c).  `make check-onnx`
 * runs all of them.  Without the test data each case fails.
 */
#include <stdio.h>
#include <unistd.h>

#include "npu_test.h"
#include "onnx_case.h"

/* The case must pass: compiled, run, outputs within tolerance. */
static void run_case(const char *name)
{
	char dir[512], why[1024] = "";
	enum npu_onnx_case_result r;

	/* A package of `make deps`; make check-unit requires it. */
	ck_assert_msg(!access(NPU_ONNX_TESTDATA, R_OK),
		      "%s: %s is missing: install Debian's libonnx-testdata (`make deps`, as root)",
		      name, NPU_ONNX_TESTDATA);
	snprintf(dir, sizeof(dir), "%s/%s", NPU_ONNX_TESTDATA, name);
	r = npu_onnx_case_run(dir, NULL, why, sizeof(why));
	ck_assert_msg(r == NPU_CASE_PASSED, "%s: %s: %s", name,
		      r == NPU_CASE_SKIPPED ? "refused" : "failed", why);
}

static const char *const cases[] = {
	"test_qlinearconv", "test_qlinearmatmul_2D", "test_matmulinteger", "test_basic_convinteger",
	"test_convinteger_with_padding",
	"test_convinteger_without_padding", "test_quantizelinear", "test_dequantizelinear",
	"test_conv_with_strides_padding", "test_basic_conv_with_padding",
	"test_maxpool_2d_pads", "test_averagepool_2d_pads", "test_relu", "test_softmax_axis_1",
	"test_gemm_default_single_elem_vector_bias", "test_transpose_all_permutations_0",
	"test_batchnorm_example", "test_batchnorm_epsilon", "test_add_bcast",
	"test_concat_3d_axis_1", "test_flatten_axis2", "test_constant_pad",
	"test_conv_with_autopad_same", "test_maxpool_2d_strides",
	"test_reduce_mean_keepdims_random", "test_reduce_mean_do_not_keepdims_random",
	"test_reduce_sum_negative_axes_keepdims_random", "test_reduce_sum_empty_axes_input_noop_random",
	"test_reduce_max_default_axes_keepdims_random", "test_reduce_max_do_not_keepdims_random",
	"test_split_equal_parts_2d", "test_split_variable_parts_1d", "test_slice",
	"test_slice_neg_steps", "test_transpose_default",
	"test_sin", "test_elu", "test_selu", "test_softplus", "test_shrink_hard", "test_sign",
	"test_reduce_l2_keep_dims_random", "test_shrink_soft",
	"test_reduce_l1_do_not_keepdims_random",
	/* graph rewrites (compile/npu_rewrite.c) */
	"test_convtranspose", "test_convtranspose_1d", "test_convtranspose_pads",
	"test_convtranspose_3d",
	"test_resize_upsample_scales_linear", "test_resize_downsample_scales_cubic",
	"test_resize_tf_crop_and_resize", "test_resize_upsample_sizes_nearest_ceil_half_pixel",
	"test_layer_normalization_3d_axis1_epsilon", "test_edge_pad", "test_reflect_pad",
	"test_matmul_4d", "test_qlinearmatmul_3D", "test_gemm_default_matrix_bias",
	"test_maxpool_3d_default", "test_averagepool_3d_default", "test_add_uint8",
	"test_clip_default_int8_min", "test_mvn_expanded", "test_mvn", "test_sum_example",
	"test_mean_example", "test_max_example", "test_instancenorm_example",
	"test_gather_2d_indices", "test_gather_negative_indices", "test_expand_dim_changed",
	"test_tile", "test_depthtospace_crd_mode_example", "test_spacetodepth_example",
	"test_hardmax_one_hot", "test_hardmax_axis_0", "test_lrn", "test_max_float16",
	"test_pow_types_float32_int64", "test_quantizelinear_axis", "test_dequantizelinear_axis",
	"test_gridsample_bicubic", "test_gridsample_reflection_padding", "test_gridsample_nearest",
	"test_mod_mixed_sign_float32", "test_mod_uint8", "test_dynamicquantizelinear_min_adjusted",
	"test_bitshift_left_uint8", "test_bitshift_right_uint8", "test_castlike_FLOAT_to_FLOAT16",
	"test_dynamicquantizelinear_expanded", "test_eyelike_populate_off_main_diagonal",
	"test_gather_elements_negative_indices", "test_gathernd_example_int32_batch_dim1",
	"test_nllloss_NCd1d2_with_weight_reduction_mean", "test_nllloss_NCd1_ii",
	"test_sce_mean_weight_ii_3d_log_prob", "test_sce_none_weights",
	"test_batchnorm_example_training_mode", "test_scatter_elements_with_duplicate_indices",
	"test_scatternd_multiply", "test_tril_neg", "test_triu_square_neg",
	"test_reversesequence_time",
	/* recurrent layers (rewrite_rnn.c) */
	"test_lstm_with_peepholes", "test_gru_with_initial_bias", "test_simple_rnn_batchwise",
};

START_TEST(conformance_case)
{
	run_case(cases[_i]);
}
END_TEST

static Suite *conformance_suite(void)
{
	Suite *s = suite_create("npu_conformance");
	TCase *tc = tcase_create("onnx");

	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, conformance_case, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(conformance_suite)
