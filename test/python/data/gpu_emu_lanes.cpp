// gpu_emu_lanes.cpp: the emulation's cross-lane primitives and barriers, run directly
// (test_gpu_emu.py builds it with tools/gpu_emu against a generated directory's headers).
//
// One block of 128 threads; each thread prints one line:
//   tid lane ballot_lo ballot_hi warp_sum block_sum neighbour first down_or_readlane
// ballot: lanes whose index is a multiple of 3; warp_sum: warp_reduce of the lane index
// through the prelude's THUNDER_SHFL_XOR; block_sum: block_reduce of threadIdx.x;
// neighbour: the value thread (tid + 1) % 128 wrote to shared memory before a
// __syncthreads; first: the warp's first lane (readfirstlane, or __shfl_sync from 0);
// down: the lane index one step down the warp (its own at the end; CUDA's
// __shfl_down_sync), or lane 5's (HIP's readlane).
#include <cstdio>

using namespace THUNDER_GPU_NS;

constexpr int kThreads = 128, kFields = 8;

__global__ void lanes_kernel(long long *out) {
  __shared__ float scratch[kMaxWarps];
  __shared__ int ring[kThreads];
  const int t = threadIdx.x;
  long long *row = out + t * kFields;
#ifdef THUNDER_EMU_HIP
  const int lane = lane_id();
  const uint64_t bits = __builtin_amdgcn_ballot_w64(lane % 3 == 0);
  row[6] = __builtin_amdgcn_readfirstlane(t);
#else
  const int lane = ::thunder_emu::lane();
  const uint64_t bits = __ballot_sync(0xffffffffu, lane % 3 == 0);
  row[6] = __shfl_sync(0xffffffffu, t, 0);
#endif
  row[0] = lane;
  row[1] = bits & 0xffffffffu;
  row[2] = bits >> 32;
  row[3] = (long long)warp_reduce<Reduce::Sum>(float(lane));
  row[4] = (long long)block_reduce<Reduce::Sum>(float(t), scratch);
  ring[t] = t * 10;
  __syncthreads();
  row[5] = ring[(t + 1) % kThreads];
#ifdef THUNDER_EMU_HIP
  row[7] = __builtin_amdgcn_readlane(lane, 5);
#else
  row[7] = __shfl_down_sync(0xffffffffu, lane, 1);
#endif
}

int main() {
  static long long out[kThreads * kFields];
  lanes_kernel<<<1, kThreads>>>(out);
  for (int t = 0; t < kThreads; ++t) {
    printf("%d", t);
    for (int f = 0; f < kFields; ++f)
      printf(" %lld", out[t * kFields + f]);
    printf("\n");
  }
  return 0;
}
