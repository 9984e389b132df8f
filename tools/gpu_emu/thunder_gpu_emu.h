// thunder_gpu_emu.h: runs Thunder's generated GPU kernels (CUDA or HIP flavour) on the CPU.
//
// The generated model.cu / model.hip and the vendor-neutral support headers
// (thunder_gpu.h, thunder_gpu_nn.h, thunder_scalar.h) are compiled as host C++
// with this header force-included (`-include thunder_gpu_emu.h`) in place of the
// vendor's prelude and libraries header, whose include guards it defines. Of
// the prelude it compiles the parts the kernels' logic rests on as they are:
// the dialect macros (THUNDER_WARP_SIZE, THUNDER_SHFL_XOR, ...) and HIP's
// wavefront shuffle over ds_bpermute, which tools/gpu_emu/gpu_emu.py copies
// from the generated directory (thunder_emu_dialect.inc, thunder_emu_lanes.inc);
// the vendor primitives under them (__shfl_xor_sync, __syncwarp,
// __builtin_amdgcn_ds_bpermute, mbcnt, wave_barrier) are emulated here. The only
// change to the sources is the launch syntax (`k<<<grid, block, smem, stream>>>(args)`
// becomes `::thunder_emu::Launch(grid, block, smem, stream)(k, args)`).
//
// The emulated machine:
// - a block's threads are fibers (ucontext) of one host thread, scheduled
//   cooperatively; __syncthreads is a real barrier (a fiber waits until every
//   live thread of its block is there); blocks run one after another;
// - a warp (CUDA, 32 lanes) or wavefront (HIP, 64 lanes) is that many
//   consecutive threads of a block (x fastest); cross-lane reads (CUDA's __shfl_xor_sync,
//   HIP's ds_bpermute) exchange through the warp with a barrier before and after
//   the read, the source lane taken modulo the warp's width as the hardware does.
//   The width is the hardware's of the flavour (an NVIDIA warp, a CDNA
//   wavefront), independent of the THUNDER_WARP_SIZE the prelude gives the
//   kernels, unless THUNDER_EMU_WARP_SIZE overrides it at run time: the
//   deliberately wrong width the tests use to prove they can fail;
// - shared memory (LDS) is thread_local, so all fibers of a block (one host
//   thread) see one copy; dynamic shared memory (up to 227 KiB on CUDA, the
//   LDS on HIP) starts every block as NaN bytes, as a GPU leaves it undefined;
// - a barrier that not all live threads can reach (a divergent __syncthreads,
//   lanes of a warp at different shuffles) aborts with a message;
// - device memory is host memory; streams, events and graphs do nothing (the work
//   runs when it is launched);
// - the vendor libraries (cuBLASLt/hipBLASLt GEMMs, cuDNN/MIOpen convolutions) are
//   plain CPU loops with the same epilogues.
#ifndef THUNDER_GPU_EMU_H
#define THUNDER_GPU_EMU_H

#if !defined(THUNDER_EMU_CUDA) && !defined(THUNDER_EMU_HIP)
#error "define THUNDER_EMU_CUDA or THUNDER_EMU_HIP (the flavour of the generated source)"
#endif

// The vendor headers this one stands in for.
#define THUNDER_CUDA_CUH
#define THUNDER_CUDA_LIBS_CUH
#define THUNDER_CUDA_DNN_CUH
#define THUNDER_CUDA_RUNTIME_CUH
#define THUNDER_HIP_H
#define THUNDER_HIP_LIBS_H
#define THUNDER_HIP_RUNTIME_H
#define THUNDER_HIP_MATH_H

#include <ucontext.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

// The kernel language.
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ thread_local
#define __constant__
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __restrict__ __restrict

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct __attribute__((aligned(8))) uint2 {
  unsigned x, y;
};
struct __attribute__((aligned(16))) uint4 {
  unsigned x, y, z, w;
};

namespace thunder_emu {

/// The hardware's warp width of the flavour: a CUDA warp, a CDNA wavefront.
#ifdef THUNDER_EMU_CUDA
constexpr int kFlavourWarp = 32;
#else
constexpr int kFlavourWarp = 64;
#endif
/// Bytes of dynamic shared memory a block may have: an H100/H200's 227 KiB
/// (opted in) for CUDA; the LDS of the library's smallest architecture for
/// HIP (THUNDER_HIP_LDS_BYTES, as the hip target's build defines it).
#ifdef THUNDER_EMU_CUDA
constexpr size_t kSmemBytes = 227 * 1024;
#else
#ifndef THUNDER_HIP_LDS_BYTES
#define THUNDER_HIP_LDS_BYTES (64 * 1024)
#endif
constexpr size_t kSmemBytes = THUNDER_HIP_LDS_BYTES;
#endif
/// Bytes of stack per emulated thread.
constexpr size_t kStackBytes = 256 * 1024;

enum class State { Ready, WaitBlock, WaitWarp, Done };

struct Fiber {
  ucontext_t ctx;
  dim3 tid;
  int linear = 0;
  State state = State::Ready;
  long warp_waits = 0; ///< warp barriers passed: equal among the lanes a barrier releases
};

/// The block being run: its fibers, the scheduler's context, the warp
/// exchange slots (16 bytes per thread).
struct Machine {
  int warp = 0; ///< lanes per warp of the emulated hardware
  dim3 block_idx, block_dim, grid_dim;
  std::vector<Fiber> fibers;
  std::vector<void *> stacks;
  std::vector<std::array<uint64_t, 2>> slots;
  ucontext_t scheduler;
  Fiber *current = nullptr;
  const std::function<void()> *body = nullptr;
  long launches = 0, blocks = 0;
};

inline Machine &machine() {
  static Machine m;
  return m;
}

/// The emulated warp width: the flavour's, or THUNDER_EMU_WARP_SIZE.
inline int warp_width(int flavour) {
  static int width = [&] {
    const char *env = getenv("THUNDER_EMU_WARP_SIZE");
    int w = env && *env ? atoi(env) : flavour;
    if (w <= 0 || (w & (w - 1))) {
      fprintf(stderr, "thunder_gpu_emu: THUNDER_EMU_WARP_SIZE=%s is not a power of two\n", env);
      abort();
    }
    return w;
  }();
  return width;
}

inline Fiber &self() { return *machine().current; }

/// Gives control back to the scheduler until the wait `s` is released.
inline void wait(State s) {
  Machine &m = machine();
  Fiber *f = m.current;
  f->state = s;
  swapcontext(&f->ctx, &m.scheduler);
}

inline void fiber_main() {
  Machine &m = machine();
  (*m.body)();
  m.current->state = State::Done;
  // uc_link returns to the scheduler.
}

/// Runs one block: every thread to its end, releasing barriers as they fill.
inline void run_block(const dim3 &bidx) {
  Machine &m = machine();
  m.block_idx = bidx;
  const int n = int(m.block_dim.x * m.block_dim.y * m.block_dim.z);
  while (int(m.stacks.size()) < n) {
    void *stack = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (stack == MAP_FAILED) {
      fprintf(stderr, "thunder_gpu_emu: cannot map a thread stack\n");
      abort();
    }
    m.stacks.push_back(stack);
  }
  m.fibers.assign(n, Fiber{});
  m.slots.assign(n, {0, 0});
  for (int i = 0; i < n; ++i) {
    Fiber &f = m.fibers[i];
    f.linear = i;
    f.tid = dim3(i % m.block_dim.x, (i / m.block_dim.x) % m.block_dim.y,
                 i / (m.block_dim.x * m.block_dim.y));
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = m.stacks[i];
    f.ctx.uc_stack.ss_size = kStackBytes;
    f.ctx.uc_link = &m.scheduler;
    makecontext(&f.ctx, fiber_main, 0);
  }
  const int W = m.warp, warps = (n + W - 1) / W;
  for (;;) {
    bool ran = false;
    for (Fiber &f : m.fibers)
      if (f.state == State::Ready) {
        m.current = &f;
        swapcontext(&m.scheduler, &f.ctx);
        ran = true;
      }
    if (ran)
      continue;
    // Nobody can run: release a warp whose live lanes all wait at a warp
    // barrier, else the block when every live thread waits at __syncthreads.
    bool released = false;
    int live = 0, at_block = 0;
    for (int w = 0; w < warps; ++w) {
      int wlive = 0, wwait = 0;
      for (int i = w * W; i < std::min(n, (w + 1) * W); ++i) {
        State s = m.fibers[i].state;
        wlive += s != State::Done;
        wwait += s == State::WaitWarp;
        at_block += s == State::WaitBlock;
      }
      live += wlive;
      if (wwait && wwait == wlive) {
        long seen = -1;
        for (int i = w * W; i < std::min(n, (w + 1) * W); ++i)
          if (m.fibers[i].state == State::WaitWarp) {
            Fiber &f = m.fibers[i];
            if (seen >= 0 && f.warp_waits != seen) {
              fprintf(stderr,
                      "thunder_gpu_emu: divergent warp in block (%u,%u,%u): lanes of warp %d "
                      "wait at different cross-lane operations (%ld and %ld passed)\n",
                      bidx.x, bidx.y, bidx.z, w, seen, f.warp_waits);
              abort();
            }
            seen = f.warp_waits;
            ++f.warp_waits;
            f.state = State::Ready;
          }
        released = true;
      }
    }
    if (released)
      continue;
    if (live == 0)
      break;
    if (at_block != live) {
      fprintf(stderr,
              "thunder_gpu_emu: deadlock in block (%u,%u,%u): %d live threads, %d at "
              "__syncthreads, the rest at a warp barrier with lanes elsewhere (divergent "
              "barrier, or a warp of %d lanes the kernel does not expect)\n",
              bidx.x, bidx.y, bidx.z, live, at_block, W);
      abort();
    }
    for (Fiber &f : m.fibers)
      if (f.state == State::WaitBlock)
        f.state = State::Ready;
  }
  m.current = nullptr;
  ++m.blocks;
}

/// The hardware lane of the current thread and its warp's first thread.
inline int lane() { return self().linear % machine().warp; }

/// A cross-lane operation: every live lane of the warp publishes `v`, then
/// `f(read)` runs in each, where read(i, out) gives lane i's value (false,
/// leaving `out`, for a lane that has exited or is past the block's end).
template <class T, class F> inline auto across(T v, F &&f) {
  static_assert(sizeof(T) <= 16, "a cross-lane value of at most 16 bytes");
  Machine &m = machine();
  Fiber &me = self();
  memcpy(m.slots[me.linear].data(), &v, sizeof(T));
  wait(State::WaitWarp);
  const int base = me.linear - me.linear % m.warp;
  auto read = [&](int i, T &out) {
    const int from = base + i;
    if (i < 0 || i >= m.warp || from >= int(m.fibers.size()) ||
        m.fibers[from].state == State::Done)
      return false;
    memcpy(&out, m.slots[from].data(), sizeof(T));
    return true;
  };
  auto result = f(read);
  wait(State::WaitWarp);
  return result;
}

/// The value `v` of lane `src` (modulo the warp width) of this warp.
template <class T> inline T exchange(T v, int src) {
  return across(v, [&](auto &read) {
    T out = v;
    read(src & (machine().warp - 1), out);
    return out;
  });
}

/// The warp's predicates as a mask (bit i: lane i's), over the emulated width.
inline uint64_t ballot(bool predicate) {
  return across(int(predicate), [&](auto &read) {
    uint64_t bits = 0;
    for (int i = 0; i < machine().warp; ++i) {
      int p = 0;
      if (read(i, p) && p)
        bits |= uint64_t(1) << i;
    }
    return bits;
  });
}

/// The dynamic shared memory (THUNDER_GPU_NS::smem_raw, defined below).
unsigned char *smem_buffer();

/// What a launch runs: `Launch(grid, block, smem, stream)(kernel, args...)`.
struct Launch {
  dim3 grid, block;
  size_t smem;
  Launch(dim3 g, dim3 b, size_t s = 0, const void * = nullptr) : grid(g), block(b), smem(s) {}
  template <class S> Launch(dim3 g, dim3 b, size_t s, S *) : grid(g), block(b), smem(s) {}

  template <class F, class... Args> void operator()(F *kernel, Args... args) const {
    Machine &m = machine();
    if (m.current) {
      fprintf(stderr, "thunder_gpu_emu: a kernel launched from a kernel\n");
      abort();
    }
    const unsigned threads = block.x * block.y * block.z;
    if (smem > kSmemBytes || threads > 1024 || threads == 0 || grid.x == 0 || grid.y == 0 ||
        grid.z == 0 || grid.y > 65535 || grid.z > 65535) {
      fprintf(stderr, "thunder_gpu_emu: a launch of grid (%u,%u,%u), block (%u,%u,%u) with %zu "
                      "bytes of dynamic shared memory is out of bounds\n", grid.x, grid.y,
              grid.z, block.x, block.y, block.z, smem);
      abort();
    }
    std::function<void()> body = [&] { kernel(args...); };
    m.body = &body;
    m.block_dim = block;
    m.grid_dim = grid;
    m.warp = warp_width(kFlavourWarp);
    ++m.launches;
    for (unsigned z = 0; z < grid.z; ++z)
      for (unsigned y = 0; y < grid.y; ++y)
        for (unsigned x = 0; x < grid.x; ++x) {
          // A block finds its dynamic shared memory uninitialized: NaN for floats.
          memset(smem_buffer(), 0xff, smem);
          run_block(dim3(x, y, z));
        }
    m.body = nullptr;
  }
};

/// Kernels launched, blocks run and the warp width they ran with (the
/// driver prints them).
void stats(long *launches, long *blocks, int *warp) {
  *launches = machine().launches;
  *blocks = machine().blocks;
  *warp = warp_width(kFlavourWarp);
}

} // namespace thunder_emu

#define threadIdx (::thunder_emu::self().tid)
#define blockIdx (::thunder_emu::machine().block_idx)
#define blockDim (::thunder_emu::machine().block_dim)
#define gridDim (::thunder_emu::machine().grid_dim)
/// The block barrier. THUNDER_EMU_BREAK_BARRIER=1 makes it do nothing, a
/// broken emulation the tests use to show that their kernels need it.
inline void __syncthreads() {
  static const bool broken = getenv("THUNDER_EMU_BREAK_BARRIER") &&
                             *getenv("THUNDER_EMU_BREAK_BARRIER") == '1';
  if (!broken)
    ::thunder_emu::wait(::thunder_emu::State::WaitBlock);
}

//===--------------------------------------------------------------------===//
// The flavours' cross-lane primitives, and their preludes' dialect macros
//===--------------------------------------------------------------------===//

#ifdef THUNDER_EMU_CUDA
struct CUstream_st;
typedef CUstream_st *cudaStream_t;
/// CUDA's __shfl_xor_sync over the whole warp.
template <class T> inline T __shfl_xor_sync(unsigned, T v, int lane_mask, int width = 32) {
  const int lane = ::thunder_emu::lane(), src = lane ^ lane_mask;
  // A later segment's lane gives the caller its own value.
  return ::thunder_emu::exchange(v, src >= (lane & ~(width - 1)) + width ? lane : src);
}
inline void __syncwarp(unsigned = 0xffffffffu) {
  ::thunder_emu::wait(::thunder_emu::State::WaitWarp);
}
// The other warp intrinsics, as CUDA's programming guide defines them over
// segments of `width` lanes (the generated code uses none of them yet).
template <class T> inline T __shfl_sync(unsigned, T v, int src, int width = 32) {
  const int lane = ::thunder_emu::lane();
  return ::thunder_emu::exchange(v, (lane & ~(width - 1)) + (src & (width - 1)));
}
template <class T> inline T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32) {
  const int lane = ::thunder_emu::lane();
  return ::thunder_emu::exchange(v, (lane % width) + int(delta) < width ? lane + int(delta) : lane);
}
template <class T> inline T __shfl_up_sync(unsigned, T v, unsigned delta, int width = 32) {
  const int lane = ::thunder_emu::lane();
  return ::thunder_emu::exchange(v, (lane % width) >= int(delta) ? lane - int(delta) : lane);
}
inline unsigned __ballot_sync(unsigned, int predicate) {
  return unsigned(::thunder_emu::ballot(predicate != 0));
}
inline int __any_sync(unsigned, int predicate) { return ::thunder_emu::ballot(predicate != 0) != 0; }
inline int __all_sync(unsigned, int predicate) {
  return ::thunder_emu::ballot(predicate == 0) == 0;
}
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
template <class F> inline int cudaFuncSetAttribute(F, cudaFuncAttribute, int) { return 0; }
#else
struct ihipStream_t;
typedef ihipStream_t *hipStream_t;
/// The lane's index in its wavefront (mbcnt over all lanes).
inline unsigned __builtin_amdgcn_mbcnt_lo(unsigned, unsigned) { return ::thunder_emu::lane(); }
inline unsigned __builtin_amdgcn_mbcnt_hi(unsigned, unsigned lo) { return lo; }
/// ds_bpermute: the word of lane (byte address / 4) modulo the wavefront.
inline int __builtin_amdgcn_ds_bpermute(int address, int word) {
  return ::thunder_emu::exchange(word, address >> 2);
}
#define __builtin_amdgcn_wave_barrier() ::thunder_emu::wait(::thunder_emu::State::WaitWarp)
// Other cross-lane builtins (the generated code uses none of them yet).
inline uint64_t __builtin_amdgcn_ballot_w64(bool predicate) {
  return ::thunder_emu::ballot(predicate);
}
inline int __builtin_amdgcn_readlane(int v, int lane) { return ::thunder_emu::exchange(v, lane); }
/// The value of the first live lane.
inline int __builtin_amdgcn_readfirstlane(int v) {
  return ::thunder_emu::across(v, [&](auto &read) {
    int out = v;
    for (int i = 0; i < ::thunder_emu::machine().warp; ++i)
      if (read(i, out))
        break;
    return out;
  });
}
#endif

// THUNDER_GPU_NS, THUNDER_WARP_SIZE, THUNDER_SHFL_XOR, THUNDER_SYNC_WARP, ...: the
// prelude's own definitions (thunder_cuda.cuh's or thunder_hip.h's "dialect macros"
// block), which gpu_emu.py copies from the generated directory.
#include "thunder_emu_dialect.inc"

#include "thunder_scalar.h"

namespace THUNDER_GPU_NS {

using i64 = int64_t;
using f16 = _Float16;
using bf16 = __bf16;

/// The dynamic shared memory of the block being run.
alignas(16) thread_local unsigned char smem_raw[::thunder_emu::kSmemBytes];

template <class T> inline T min(T a, T b) { return b < a ? b : a; }
template <class T> inline T max(T a, T b) { return a < b ? b : a; }

#ifdef THUNDER_EMU_HIP
// thunder_hip.h's lane_id and shfl_xor (copied by gpu_emu.py), over the emulated builtins.
#include "thunder_emu_lanes.inc"
#endif

} // namespace THUNDER_GPU_NS

namespace thunder_scalar {
template <> struct is_lowp<_Float16> : std::true_type {};
template <> struct is_lowp<__bf16> : std::true_type {};
} // namespace thunder_scalar

unsigned char *thunder_emu::smem_buffer() { return THUNDER_GPU_NS::smem_raw; }

#include "thunder_gpu.h"
#include "thunder_gpu_nn.h"

//===--------------------------------------------------------------------===//
// The runtime API the generated host code calls, over host memory
//===--------------------------------------------------------------------===//

#ifdef THUNDER_EMU_CUDA
#define THUNDER_EMU_API(name) cuda##name
#else
#define THUNDER_EMU_API(name) hip##name
#endif

enum THUNDER_EMU_API(Error_t) { THUNDER_EMU_API(Success) = 0, THUNDER_EMU_API(ErrorEmulated) = 1 };
enum THUNDER_EMU_API(MemcpyKind) {
  THUNDER_EMU_API(MemcpyHostToDevice) = 1,
  THUNDER_EMU_API(MemcpyDeviceToHost) = 2,
  THUNDER_EMU_API(MemcpyDeviceToDevice) = 3,
};
constexpr unsigned THUNDER_EMU_API(StreamNonBlocking) = 1;
struct thunder_emu_event;
typedef thunder_emu_event *THUNDER_EMU_API(Event_t);
typedef THUNDER_EMU_API(Error_t) THUNDER_EMU_API(Error);

inline THUNDER_EMU_API(Error_t) THUNDER_EMU_API(Malloc)(void **p, size_t bytes) {
  *p = aligned_alloc(256, (bytes + 255) / 256 * 256);
  return *p ? THUNDER_EMU_API(Success) : THUNDER_EMU_API(ErrorEmulated);
}
template <class T> inline THUNDER_EMU_API(Error_t) THUNDER_EMU_API(Malloc)(T **p, size_t bytes) {
  return THUNDER_EMU_API(Malloc)(reinterpret_cast<void **>(p), bytes);
}
inline THUNDER_EMU_API(Error_t) THUNDER_EMU_API(Free)(void *p) {
  free(p);
  return THUNDER_EMU_API(Success);
}
inline THUNDER_EMU_API(Error_t) THUNDER_EMU_API(Memcpy)(void *d, const void *s, size_t n,
                                                       int = 0) {
  memmove(d, s, n);
  return THUNDER_EMU_API(Success);
}
template <class S>
inline THUNDER_EMU_API(Error_t) THUNDER_EMU_API(MemcpyAsync)(void *d, const void *s, size_t n,
                                                            int, S) {
  memmove(d, s, n);
  return THUNDER_EMU_API(Success);
}
template <class S>
inline THUNDER_EMU_API(Error_t) THUNDER_EMU_API(MemsetAsync)(void *d, int v, size_t n, S) {
  memset(d, v, n);
  return THUNDER_EMU_API(Success);
}
template <class S>
inline THUNDER_EMU_API(Error_t) THUNDER_EMU_API(StreamCreateWithFlags)(S *s, unsigned) {
  *s = nullptr;
  return THUNDER_EMU_API(Success);
}
template <class S> inline THUNDER_EMU_API(Error_t) THUNDER_EMU_API(StreamCreate)(S *s) {
  *s = nullptr;
  return THUNDER_EMU_API(Success);
}
template <class S> inline THUNDER_EMU_API(Error_t) THUNDER_EMU_API(StreamSynchronize)(S) {
  return THUNDER_EMU_API(Success);
}
template <class S> inline THUNDER_EMU_API(Error_t) THUNDER_EMU_API(StreamDestroy)(S) {
  return THUNDER_EMU_API(Success);
}
template <class S, class E>
inline THUNDER_EMU_API(Error_t) THUNDER_EMU_API(EventRecord)(E, S) {
  return THUNDER_EMU_API(Success);
}
template <class S, class E>
inline THUNDER_EMU_API(Error_t) THUNDER_EMU_API(StreamWaitEvent)(S, E, unsigned = 0) {
  return THUNDER_EMU_API(Success);
}
inline THUNDER_EMU_API(Error_t) THUNDER_EMU_API(DeviceSynchronize)() {
  return THUNDER_EMU_API(Success);
}
inline THUNDER_EMU_API(Error_t) THUNDER_EMU_API(GetLastError)() {
  return THUNDER_EMU_API(Success);
}

//===--------------------------------------------------------------------===//
// The libraries header: the Runtime, GEMMs and convolutions on the CPU
//===--------------------------------------------------------------------===//

namespace THUNDER_GPU_NS {

using stream_t = THUNDER_STREAM_T;

enum class Epilogue : uint32_t {
  None = 1,
  Relu = 2,
  Bias = 4,
  ReluBias = 6,
  GeluTanh = 32,
  GeluTanhBias = 36,
};

struct Lt {};
struct Dnn {
  const char *(*errorString)(int) = nullptr;
};

/// Ctx::error's code of an attention whose head dims the kernel does not take.
constexpr int kFailureAttention = 1;

inline int report(char *error, size_t size, const char *what, int e) {
  snprintf(error, size, "%s: emulated error %d", what, e);
  return 1;
}
inline int report_library(char *error, size_t size, int code, const Dnn *) {
  if (code == kFailureAttention)
    snprintf(error, size, "attention with head dims above 256 is not supported");
  else
    snprintf(error, size, "library call failed with code %d", code);
  return 1;
}

/// The model's device state: nothing to hold but the facts the kernels'
/// launches read (2 multiprocessors: grids of a few blocks, grid-stride
/// loops that go round).
class Runtime {
public:
  int sms = 2;
  Lt lt;
  bool have_lt = true;
  std::string lt_missing;
  Dnn dnn;
  bool have_dnn = true;
  std::string dnn_missing;
  bool graphs = false;
  std::vector<THUNDER_EMU_API(Event_t)> events;

  int init(int, int num_events, bool, bool, bool, const void *, const char *, char *, size_t) {
    events.assign(num_events, nullptr);
    return 0;
  }
  /// One stream: the work runs in the order it is enqueued, which the
  /// events' order allows.
  stream_t stream(int, stream_t main) const { return main; }
  void fork(stream_t) {}
  void join(stream_t) {}
  template <class F>
  int run(stream_t caller, const std::vector<uintptr_t> &, F &&enqueue, char *, size_t) {
    return enqueue(caller);
  }
};

struct DeviceBuffer {
  void *ptr = nullptr;
  ~DeviceBuffer() { free(ptr); }
};

/// out[b] = op(a[b]) @ op(b[b]) (+ bias per column, then the activation):
/// the GEMM library's call, in the accumulator type.
template <class T>
void gemm(const Ctx &, bool ta, bool tb, i64 m, i64 n, i64 k, const T *a, i64 lda, i64 sa,
          const T *b, i64 ldb, i64 sb, T *out, i64 ldc, i64 sc, i64 batch,
          Epilogue epi = Epilogue::None, const T *bias = nullptr) {
  using A = acc_t<T>;
  for (i64 p = 0; p < batch; ++p)
    for (i64 i = 0; i < m; ++i)
      for (i64 j = 0; j < n; ++j) {
        A acc = 0;
        for (i64 q = 0; q < k; ++q) {
          A x = static_cast<A>(cv(ta ? a[p * sa + q * lda + i] : a[p * sa + i * lda + q]));
          A y = static_cast<A>(cv(tb ? b[p * sb + j * ldb + q] : b[p * sb + q * ldb + j]));
          acc += x * y;
        }
        if (bias && (epi == Epilogue::Bias || epi == Epilogue::ReluBias ||
                     epi == Epilogue::GeluTanhBias))
          acc += static_cast<A>(cv(bias[j]));
        if (epi == Epilogue::Relu || epi == Epilogue::ReluBias)
          acc = relu(acc);
        if constexpr (std::is_floating_point_v<A>)
          if (epi == Epilogue::GeluTanh || epi == Epilogue::GeluTanhBias)
            acc = gelu_tanh(acc);
        out[p * sc + i * ldc + j] = st<T>(static_cast<compute_t<T>>(acc));
      }
}

/// The vendor headers' matmul: [batch, m, k] @ [batch or 1, k, n].
template <class T>
void matmul(const Ctx &c, const T *lhs, const T *rhs, T *out, i64 batch, i64 m, i64 n, i64 k,
            bool ta, bool tb, bool rhs_shared, Epilogue epi = Epilogue::None,
            const T *bias = nullptr) {
  if (rhs_shared && !ta) {
    m *= batch;
    batch = 1;
  }
  i64 lda = ta ? m : k, ldb = tb ? k : n;
  gemm(c, ta, tb, m, n, k, lhs, lda, m * k, rhs, ldb, rhs_shared ? 0 : k * n, out, n, m * n,
       batch, epi, bias);
}

inline i64 conv_scratch_bytes(i64, i64, i64, i64, const Window &) { return 0; }

/// out = conv(in, w) (+ bias per output channel): the convolution library's
/// call, a direct loop over the window.
template <class T>
void conv(const Ctx &, const T *in, const T *w, const T *bias, T *out, i64 batch, i64 cin,
          i64 cout, i64 groups, const Window &win, bool) {
  using A = acc_t<T>;
  const i64 in_size = win.in_size(), out_size = win.out_size(), kk = win.taps();
  const i64 cin_g = cin / groups, cout_g = cout / groups;
  for (i64 b = 0; b < batch; ++b)
    for (i64 oc = 0; oc < cout; ++oc)
      for (i64 o = 0; o < out_size; ++o) {
        i64 oidx[3] = {0, 0, 0};
        win.out_index(o, oidx);
        const i64 g = oc / cout_g;
        A acc = bias ? static_cast<A>(cv(bias[oc])) : A(0);
        for (i64 ic = 0; ic < cin_g; ++ic)
          for (i64 kf = 0; kf < kk; ++kf) {
            i64 off;
            if (win.tap_offset(oidx, kf, off))
              acc += static_cast<A>(cv(in[(b * cin + g * cin_g + ic) * in_size + off])) *
                     static_cast<A>(cv(w[(oc * cin_g + ic) * kk + kf]));
          }
        out[(b * cout + oc) * out_size + o] = st<T>(static_cast<compute_t<T>>(acc));
      }
}

} // namespace THUNDER_GPU_NS

#endif // THUNDER_GPU_EMU_H
