// Checks the declarations thunder_cuda_libs.cuh makes of cuBLASLt's and
// cuDNN's C APIs (it opens both with dlopen and includes neither header)
// against NVIDIA's own headers: every function Thunder loads has the real
// one's arity and parameter sizes, and every enum value and struct layout it
// relies on matches. Compiled (not run) by library_abi.test.
#include "thunder_cuda_libs.cuh"

#include <cublasLt.h>
#include <cudnn.h>

#include <cstddef>
#include <type_traits>

namespace {

/// Whether a function pointer type of ours and the real function type pass
/// arguments the same way: same arity, same sizes, pointers where pointers,
/// floating point where floating point. (Our opaque handle types are distinct
/// C++ types, declared in our namespace, so only their pointer-ness counts.)
template <class Ours, class Theirs> struct SameAbi : std::false_type {};
template <class R1, class... A1, class R2, class... A2>
struct SameAbi<R1 (*)(A1...), R2(A2...)> {
  template <class X, class Y> static constexpr bool same() {
    return sizeof(X) == sizeof(Y) && std::is_pointer_v<X> == std::is_pointer_v<Y> &&
           std::is_floating_point_v<X> == std::is_floating_point_v<Y>;
  }
  static constexpr bool arity() { return sizeof...(A1) == sizeof...(A2); }
  template <bool Same = arity()> static constexpr bool params() {
    if constexpr (Same)
      return (same<A1, A2>() && ...);
    else
      return false;
  }
  static constexpr bool value = same<R1, R2>() && params();
};
#define THUNDER_CHECK_FN(ours, theirs)                                                        \
  static_assert(SameAbi<decltype(ours), decltype(theirs)>::value,                              \
                #ours " does not match " #theirs)

using thunder_cuda::Dnn;
using thunder_cuda::Lt;

// cuBLASLt.
THUNDER_CHECK_FN(Lt::create, cublasLtCreate);
THUNDER_CHECK_FN(Lt::destroy, cublasLtDestroy);
THUNDER_CHECK_FN(Lt::descCreate, cublasLtMatmulDescCreate);
THUNDER_CHECK_FN(Lt::descDestroy, cublasLtMatmulDescDestroy);
THUNDER_CHECK_FN(Lt::descSet, cublasLtMatmulDescSetAttribute);
THUNDER_CHECK_FN(Lt::layoutCreate, cublasLtMatrixLayoutCreate);
THUNDER_CHECK_FN(Lt::layoutDestroy, cublasLtMatrixLayoutDestroy);
THUNDER_CHECK_FN(Lt::layoutSet, cublasLtMatrixLayoutSetAttribute);
THUNDER_CHECK_FN(Lt::prefCreate, cublasLtMatmulPreferenceCreate);
THUNDER_CHECK_FN(Lt::prefDestroy, cublasLtMatmulPreferenceDestroy);
THUNDER_CHECK_FN(Lt::prefSet, cublasLtMatmulPreferenceSetAttribute);
THUNDER_CHECK_FN(Lt::heuristic, cublasLtMatmulAlgoGetHeuristic);
THUNDER_CHECK_FN(Lt::matmul, cublasLtMatmul);

namespace lt = thunder_cuda::lt_api;
static_assert(sizeof(lt::Algo) == sizeof(cublasLtMatmulAlgo_t));
static_assert(sizeof(lt::HeuristicResult) == sizeof(cublasLtMatmulHeuristicResult_t));
static_assert(offsetof(lt::HeuristicResult, workspaceSize) ==
              offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize));
static_assert(offsetof(lt::HeuristicResult, state) ==
              offsetof(cublasLtMatmulHeuristicResult_t, state));
static_assert(lt::kOpN == CUBLAS_OP_N && lt::kOpT == CUBLAS_OP_T);
static_assert(lt::kCompute32F == CUBLAS_COMPUTE_32F && lt::kCompute64F == CUBLAS_COMPUTE_64F);
static_assert(lt::kDescTransA == CUBLASLT_MATMUL_DESC_TRANSA &&
              lt::kDescTransB == CUBLASLT_MATMUL_DESC_TRANSB &&
              lt::kDescEpilogue == CUBLASLT_MATMUL_DESC_EPILOGUE &&
              lt::kDescBiasPointer == CUBLASLT_MATMUL_DESC_BIAS_POINTER);
static_assert(lt::kLayoutBatchCount == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT &&
              lt::kLayoutBatchStride == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
static_assert(lt::kPrefMaxWorkspace == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES &&
              lt::kPrefAlignA == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES &&
              lt::kPrefAlignB == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES &&
              lt::kPrefAlignC == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES &&
              lt::kPrefAlignD == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES);
using thunder_cuda::Epilogue;
static_assert(int(Epilogue::None) == CUBLASLT_EPILOGUE_DEFAULT &&
              int(Epilogue::Relu) == CUBLASLT_EPILOGUE_RELU &&
              int(Epilogue::Bias) == CUBLASLT_EPILOGUE_BIAS &&
              int(Epilogue::ReluBias) == CUBLASLT_EPILOGUE_RELU_BIAS &&
              int(Epilogue::GeluTanh) == CUBLASLT_EPILOGUE_GELU &&
              int(Epilogue::GeluTanhBias) == CUBLASLT_EPILOGUE_GELU_BIAS);

// cuDNN.
THUNDER_CHECK_FN(Dnn::version, cudnnGetVersion);
THUNDER_CHECK_FN(Dnn::errorString, cudnnGetErrorString);
THUNDER_CHECK_FN(Dnn::create, cudnnCreate);
THUNDER_CHECK_FN(Dnn::destroy, cudnnDestroy);
THUNDER_CHECK_FN(Dnn::setStream, cudnnSetStream);
THUNDER_CHECK_FN(Dnn::tensorCreate, cudnnCreateTensorDescriptor);
THUNDER_CHECK_FN(Dnn::tensorSet, cudnnSetTensorNdDescriptor);
THUNDER_CHECK_FN(Dnn::tensorDestroy, cudnnDestroyTensorDescriptor);
THUNDER_CHECK_FN(Dnn::filterCreate, cudnnCreateFilterDescriptor);
THUNDER_CHECK_FN(Dnn::filterSet, cudnnSetFilterNdDescriptor);
THUNDER_CHECK_FN(Dnn::filterDestroy, cudnnDestroyFilterDescriptor);
THUNDER_CHECK_FN(Dnn::convCreate, cudnnCreateConvolutionDescriptor);
THUNDER_CHECK_FN(Dnn::convSet, cudnnSetConvolutionNdDescriptor);
THUNDER_CHECK_FN(Dnn::convGroups, cudnnSetConvolutionGroupCount);
THUNDER_CHECK_FN(Dnn::convMath, cudnnSetConvolutionMathType);
THUNDER_CHECK_FN(Dnn::convDestroy, cudnnDestroyConvolutionDescriptor);
THUNDER_CHECK_FN(Dnn::heuristic, cudnnGetConvolutionForwardAlgorithm_v7);
THUNDER_CHECK_FN(Dnn::find, cudnnFindConvolutionForwardAlgorithmEx);
THUNDER_CHECK_FN(Dnn::workspaceSize, cudnnGetConvolutionForwardWorkspaceSize);
THUNDER_CHECK_FN(Dnn::forward, cudnnConvolutionForward);

namespace dnn = thunder_cuda::dnn_api;
static_assert(sizeof(dnn::AlgoPerf) == sizeof(cudnnConvolutionFwdAlgoPerf_t));
static_assert(offsetof(dnn::AlgoPerf, status) == offsetof(cudnnConvolutionFwdAlgoPerf_t, status));
static_assert(offsetof(dnn::AlgoPerf, memory) == offsetof(cudnnConvolutionFwdAlgoPerf_t, memory));
static_assert(offsetof(dnn::AlgoPerf, mathType) ==
              offsetof(cudnnConvolutionFwdAlgoPerf_t, mathType));
static_assert(dnn::kSuccess == CUDNN_STATUS_SUCCESS);
static_assert(dnn::kFloat == CUDNN_DATA_FLOAT && dnn::kDouble == CUDNN_DATA_DOUBLE &&
              dnn::kHalf == CUDNN_DATA_HALF && dnn::kBFloat16 == CUDNN_DATA_BFLOAT16);
static_assert(dnn::kNCHW == CUDNN_TENSOR_NCHW);
static_assert(dnn::kCrossCorrelation == CUDNN_CROSS_CORRELATION);
static_assert(dnn::kDefaultMath == CUDNN_DEFAULT_MATH &&
              dnn::kTensorOpMath == CUDNN_TENSOR_OP_MATH && dnn::kFmaMath == CUDNN_FMA_MATH);
static_assert(dnn::kFwdAlgoCount == CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
static_assert(CUDNN_MAJOR == 9, "Dnn::load accepts cuDNN 9 only");

} // namespace
