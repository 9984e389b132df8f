// thunder_cpu_host.h: what a CPU model's host program (model.cpp) needs of the
// support library: the call made when a model is created and the registry of
// file-backed weight memory. Kept apart from thunder_cpu.h (templates, oneDNN,
// CBLAS) so the host unit, which calls kernels in units of their own, parses
// in a fraction of the time; thunder_cpu.h includes it.
#ifndef THUNDER_CPU_HOST_H
#define THUNDER_CPU_HOST_H

#include "thunder_cpu_base.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

// OpenBLAS's (cblas.h declares it too; the host unit does without cblas.h).
// Weak: a library links OpenBLAS only where a kernel calls it (float64
// GEMMs; the link is --as-needed), and is then null.
extern "C" void openblas_set_num_threads(int) __attribute__((weak));

namespace thunder_cpu {

/// Called once when a model is created: OpenBLAS's GEMMs, where the library
/// has them, run single-threaded inside OpenMP's threads (see matmul).
inline void thunder_cpu_init() {
  if (openblas_set_num_threads)
    openblas_set_num_threads(1);
}

//===--------------------------------------------------------------------===//
// Weights in file-backed memory
//===--------------------------------------------------------------------===//

/// The model states' read-only file mappings that hold weights: the
/// library's embedded blob (mapped from the .so by the loader) or the mapped
/// weights file. A kernel that keeps its own transformed copy of a constant
/// in such memory (a convolution filter in oneDNN's blocked layout) hands the
/// original's pages back to the system (release_weight_pages); they are read
/// from the file again if anything touches them, so this changes the resident
/// size, never a value. The caller's tensors given to create_with (weights
/// read in place) are not file-backed and are never released.
struct FileBackedWeights {
  /// A spin lock (<mutex> alone costs the host unit a third of a second to
  /// parse); taken at a model's create and destroy and once per released
  /// filter, never contended for long.
  std::atomic_flag busy = ATOMIC_FLAG_INIT;
  std::vector<std::pair<const unsigned char *, size_t>> ranges;

  struct Lock {
    std::atomic_flag &flag;
    explicit Lock(std::atomic_flag &f) : flag(f) {
      while (flag.test_and_set(std::memory_order_acquire)) {
      }
    }
    ~Lock() { flag.clear(std::memory_order_release); }
  };

  static FileBackedWeights &get() {
    static FileBackedWeights ranges;
    return ranges;
  }
  void add(const unsigned char *base, size_t size) {
    Lock lock(busy);
    ranges.emplace_back(base, size);
  }
  void remove(const unsigned char *base) {
    Lock lock(busy);
    for (auto it = ranges.begin(); it != ranges.end(); ++it)
      if (it->first == base) {
        ranges.erase(it);
        return;
      }
  }
  bool contains(const void *p, size_t bytes) {
    auto *b = static_cast<const unsigned char *>(p);
    Lock lock(busy);
    for (auto &[base, size] : ranges)
      if (b >= base && b + bytes <= base + size)
        return true;
    return false;
  }
};

/// Counts the models created or destroyed whose caller gave some of their
/// weights (thunder.compile reads the module's tensors in place): a new
/// model may give memory that held other values when a copy was made (a
/// freed model's weights, or the same tensors changed in place since, as
/// when thunder.compile loads its cached library again for new values of a
/// module's parameters).
inline std::atomic<uint64_t> &caller_weights_epoch() {
  static std::atomic<uint64_t> count{0};
  return count;
}

/// Where a kernel's own copy of a constant (a reordered filter, kept by the
/// constant's pointer) was made from. A copy of file-backed weights holds
/// while that pointer is in file-backed weights: this library's weights,
/// which are the same bytes wherever they are mapped. A copy of the caller's
/// memory holds only while no model with caller weights has been created or
/// destroyed since (caller_weights_epoch): that memory may since hold other
/// values. (Either kind of memory can later sit at the same address as the
/// other.)
struct WeightCopyStamp {
  bool from_file = false;
  uint64_t epoch = 0; ///< caller_weights_epoch() when made
};

/// The stamp of a copy being made now of [p, p + bytes).
inline WeightCopyStamp stamp_weight_copy(const void *p, size_t bytes) {
  return {FileBackedWeights::get().contains(p, bytes), caller_weights_epoch().load()};
}

/// Whether a copy of [p, p + bytes) stamped `s` still holds its bytes.
inline bool weight_copy_current(const void *p, size_t bytes, const WeightCopyStamp &s) {
  return s.from_file ? FileBackedWeights::get().contains(p, bytes)
                     : s.epoch == caller_weights_epoch().load();
}

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21 // Linux 5.4
#endif

/// Releases the whole pages of [p, p + bytes) when they are file-backed
/// weights (see FileBackedWeights): MADV_PAGEOUT reclaims them and keeps
/// their contents (a later read faults them in from the file). Returns the
/// bytes released; 0 where the memory is not file-backed, or where the
/// kernel does not know MADV_PAGEOUT (the pages then stay, as before).
inline size_t release_weight_pages(const void *p, size_t bytes) {
  if (!bytes || !FileBackedWeights::get().contains(p, bytes))
    return 0;
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) & ~(page - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(page - 1);
  if (end <= begin ||
      madvise(reinterpret_cast<void *>(begin), end - begin, MADV_PAGEOUT) != 0)
    return 0;
  return end - begin;
}

} // namespace thunder_cpu

#endif // THUNDER_CPU_HOST_H
