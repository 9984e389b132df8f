// thunder_cpu_conv.h: convolution and pooling of Thunder's CPU support
// library (included at the end of thunder_cpu.h, whose types and GEMMs it
// uses).
//
// f32 convolutions run NCHW-native where that needs no layout change
// (pointwise as a GEMM, depthwise as a direct vectorized kernel), the rest as
// cached oneDNN primitives; other types (and what oneDNN cannot take) as
// im2col + GEMM. Pooling is in thunder_cpu_pool.h, which this header
// includes at its end.
#ifndef THUNDER_CPU_CONV_H
#define THUNDER_CPU_CONV_H

#include "thunder_cpu_conv_api.h"

namespace thunder_cpu {

//===--------------------------------------------------------------------===//
// Convolution (oneDNN direct convolution for f32; im2col + GEMM otherwise)
// and pooling, 1-3 spatial dims
//===--------------------------------------------------------------------===//

/// f32 convolutions run as oneDNN convolution primitives (direct JIT kernels
/// on blocked layouts), several times faster than im2col + GEMM. One
/// primitive per convolution shape, created on first use and kept for the
/// library's lifetime in a cache behind a mutex (primitive creation costs far
/// more than a run; models may run from several threads at once). Executing
/// a cached primitive is thread-safe: the scratchpad is ours (user mode) and
/// allocated per call, and each call uses its own stream.
///
/// Layouts: our tensors are plain NC[D]HW, or N[D]HW C where the compiler
/// keeps one channels last between two of these convolutions (`layout`,
/// ConvLayout), and weights plain O I [D]H W. The primitive takes the
/// formats oneDNN prefers (format_tag any: channels last with AVX-512,
/// blocked nChw8c with AVX2 alone), with reorders where they differ from
/// ours: the input and output are reordered per call
/// (kSourceAny: measured faster than plain in/out on ResNet-18, see conv),
/// the weights once, when they are constants (`weights_constant`: a
/// thunder.constant, which lives as long as the model): the reordered copy is
/// keyed by the weight pointer, and the plain one's pages are released when
/// they are the library's file-backed weights (release_weight_pages).
/// A copy is redone when it may no longer hold the bytes at its pointer
/// (weight_copy_current: the caller's memory, as thunder.compile's libraries
/// read the module's tensors in place, may since hold other values, once a
/// model with caller weights was created or destroyed), into a new buffer:
/// the old one stays alive, as a run may still read it.
/// Non-constant weights are reordered per call.
namespace dnnl_conv {

/// Whether the input/output take oneDNN's preferred (blocked) formats, with a
/// reorder each call, or stay plain NC[D]HW.
constexpr bool kSourceAny = true;

struct Buffer {
  void *p = nullptr;
  explicit Buffer(size_t bytes) : p(bytes ? std::aligned_alloc(64, (bytes + 63) / 64 * 64) : nullptr) {}
  ~Buffer() { std::free(p); }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
};

struct Primitive {
  bool ok = false;
  dnnl_primitive_t conv = nullptr, src_reorder = nullptr,
                   dst_reorder = nullptr, wei_reorder = nullptr;
  dnnl_memory_desc_t src_user, wei_user, dst_user, bias_md, src_md, wei_md,
      dst_md, scratch_md;
  // Reordered constant weights, by the pointer of the plain ones, each with
  // where it was made from; stale copies, kept alive (see above).
  struct Copy {
    std::unique_ptr<Buffer> buffer;
    WeightCopyStamp made;
  };
  std::map<const void *, Copy> weights;
  std::vector<std::unique_ptr<Buffer>> retired;
};

struct Cache {
  std::mutex mutex;
  dnnl_engine_t engine = nullptr;
  std::map<std::vector<i64>, std::unique_ptr<Primitive>> primitives;
  ~Cache() {
    for (auto &entry : primitives)
      for (dnnl_primitive_t p : {entry.second->conv, entry.second->src_reorder,
                                 entry.second->dst_reorder,
                                 entry.second->wei_reorder})
        if (p)
          dnnl_primitive_destroy(p);
    if (engine)
      dnnl_engine_destroy(engine);
  }
};

inline Cache &cache() {
  static Cache c;
  return c;
}

/// A reorder primitive from `from` to `to`, or null when they are equal.
inline bool make_reorder(dnnl_engine_t engine, const dnnl_memory_desc_t &from,
                         const dnnl_memory_desc_t &to, dnnl_primitive_t *out) {
  *out = nullptr;
  if (dnnl_memory_desc_equal(&from, &to))
    return true;
  dnnl_primitive_desc_t pd;
  if (dnnl_reorder_primitive_desc_create(&pd, &from, engine, &to, engine,
                                         nullptr) != dnnl_success)
    return false;
  bool ok = dnnl_primitive_create(out, pd) == dnnl_success;
  dnnl_primitive_desc_destroy(pd);
  return ok;
}

/// Creates the primitive for one convolution (under the cache's mutex).
inline void create(Primitive &p, dnnl_engine_t engine, i64 batch, i64 cin,
                   i64 cout, i64 groups, bool has_bias, const Window &win, int layout) {
  static const dnnl_format_tag_t data_tags[] = {dnnl_ncw, dnnl_nchw, dnnl_ncdhw};
  static const dnnl_format_tag_t last_tags[] = {dnnl_nwc, dnnl_nhwc, dnnl_ndhwc};
  static const dnnl_format_tag_t wei_tags[] = {dnnl_oiw, dnnl_oihw, dnnl_oidhw};
  static const dnnl_format_tag_t gwei_tags[] = {dnnl_goiw, dnnl_goihw, dnnl_goidhw};
  int s = win.spatial, nd = s + 2;
  dnnl_dims_t src{}, dst{}, wei{}, bias{cout}, strides{}, dilates{}, pad_l{},
      pad_r{};
  src[0] = dst[0] = batch;
  src[1] = cin;
  dst[1] = cout;
  int wd = 0;
  if (groups > 1)
    wei[wd++] = groups;
  wei[wd++] = cout / groups;
  wei[wd++] = cin / groups;
  for (int i = 0; i < s; ++i) {
    src[2 + i] = win.in[i];
    dst[2 + i] = win.out[i];
    wei[wd++] = win.kernel[i];
    strides[i] = win.stride[i];
    dilates[i] = win.dilation[i] - 1; // oneDNN counts the holes
    pad_l[i] = win.pad_lo[i];
    // The high padding that makes oneDNN's output size PyTorch's: the
    // smallest that covers the last window, at least 0 (PyTorch's floor may
    // leave input rows unread).
    i64 extent = (win.kernel[i] - 1) * win.dilation[i] + 1;
    pad_r[i] = std::max<i64>(0, (win.out[i] - 1) * win.stride[i] + extent -
                                    win.in[i] - win.pad_lo[i]);
  }
  auto tag = [&](dnnl_memory_desc_t *md, int n, const dnnl_dims_t dims,
                 dnnl_format_tag_t t) {
    return dnnl_memory_desc_init_by_tag(md, n, dims, dnnl_f32, t) == dnnl_success;
  };
  if (!tag(&p.src_user, nd, src,
           (layout & kInputChannelsLast ? last_tags : data_tags)[s - 1]) ||
      !tag(&p.dst_user, nd, dst,
           (layout & kOutputChannelsLast ? last_tags : data_tags)[s - 1]) ||
      !tag(&p.wei_user, wd, wei, groups > 1 ? gwei_tags[s - 1] : wei_tags[s - 1]) ||
      !tag(&p.bias_md, 1, bias, dnnl_x))
    return;
  dnnl_memory_desc_t src_any, dst_any, wei_any;
  // (Forcing channels last where the caller's tensor is so, rather than
  // any: oneDNN 2.6 without AVX-512 then runs its reference kernels, 70x
  // slower on ResNet-18. With `any` it picks its blocked layout there and
  // reorders from channels last as it did from channels first.)
  if (!tag(&src_any, nd, src, kSourceAny ? dnnl_format_tag_any : data_tags[s - 1]) ||
      !tag(&dst_any, nd, dst, kSourceAny ? dnnl_format_tag_any : data_tags[s - 1]) ||
      !tag(&wei_any, wd, wei, dnnl_format_tag_any))
    return;
  dnnl_convolution_desc_t desc;
  if (dnnl_dilated_convolution_forward_desc_init(
          &desc, dnnl_forward_inference, dnnl_convolution_direct, &src_any,
          &wei_any, has_bias ? &p.bias_md : nullptr, &dst_any, strides,
          dilates, pad_l, pad_r) != dnnl_success)
    return;
  dnnl_primitive_attr_t attr;
  if (dnnl_primitive_attr_create(&attr) != dnnl_success)
    return;
  dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  dnnl_primitive_desc_t pd;
  dnnl_status_t status =
      dnnl_primitive_desc_create(&pd, &desc, attr, engine, nullptr);
  dnnl_primitive_attr_destroy(attr);
  if (status != dnnl_success)
    return;
  p.src_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  p.wei_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  p.dst_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  p.scratch_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  p.ok = dnnl_primitive_create(&p.conv, pd) == dnnl_success &&
         make_reorder(engine, p.src_user, p.src_md, &p.src_reorder) &&
         make_reorder(engine, p.dst_md, p.dst_user, &p.dst_reorder) &&
         make_reorder(engine, p.wei_user, p.wei_md, &p.wei_reorder);
  dnnl_primitive_desc_destroy(pd);
}

/// Memory objects for one call, destroyed with it.
struct Memories {
  dnnl_engine_t engine;
  std::vector<dnnl_memory_t> all;
  bool ok = true;
  dnnl_memory_t operator()(const dnnl_memory_desc_t &md, const void *data) {
    dnnl_memory_t m = nullptr;
    if (dnnl_memory_create(&m, &md, engine, const_cast<void *>(data)) != dnnl_success)
      ok = false;
    else
      all.push_back(m);
    return m;
  }
  ~Memories() {
    for (dnnl_memory_t m : all)
      dnnl_memory_destroy(m);
  }
};

inline bool run_reorder(dnnl_primitive_t reorder, dnnl_stream_t stream,
                        dnnl_memory_t from, dnnl_memory_t to) {
  dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  return dnnl_primitive_execute(reorder, stream, 2, args) == dnnl_success;
}

/// Runs the convolution through oneDNN; false if oneDNN does not take it
/// (the caller then falls back to im2col + GEMM).
inline bool conv(const float *in, const float *w, const float *bias, float *out,
                 i64 batch, i64 cin, i64 cout, i64 groups, const Window &win,
                 bool weights_constant, int layout) {
  Cache &c = cache();
  Primitive *p;
  const void *weights = w;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (!c.engine && dnnl_engine_create(&c.engine, dnnl_cpu, 0) != dnnl_success) {
      c.engine = nullptr;
      return false;
    }
    std::vector<i64> key{win.spatial, batch, cin, cout, groups, bias != nullptr, layout};
    for (int s = 0; s < win.spatial; ++s)
      key.insert(key.end(), {win.in[s], win.out[s], win.kernel[s], win.stride[s],
                             win.pad_lo[s], win.dilation[s]});
    auto &slot = c.primitives[key];
    if (!slot) {
      slot = std::make_unique<Primitive>();
      create(*slot, c.engine, batch, cin, cout, groups, bias != nullptr, win, layout);
    }
    p = slot.get();
    if (!p->ok)
      return false;
    if (p->wei_reorder && weights_constant) {
      auto &copy = p->weights[w];
      const size_t plain = dnnl_memory_desc_get_size(&p->wei_user);
      if (!copy.buffer || !weight_copy_current(w, plain, copy.made)) {
        const WeightCopyStamp stamp = stamp_weight_copy(w, plain);
        auto fresh = std::make_unique<Buffer>(dnnl_memory_desc_get_size(&p->wei_md));
        dnnl_stream_t stream;
        if (dnnl_stream_create(&stream, c.engine, dnnl_stream_default_flags) != dnnl_success)
          return false;
        Memories mem{c.engine};
        dnnl_memory_t from = mem(p->wei_user, w), to = mem(p->wei_md, fresh->p);
        bool ok = mem.ok && run_reorder(p->wei_reorder, stream, from, to) &&
                  dnnl_stream_wait(stream) == dnnl_success;
        dnnl_stream_destroy(stream);
        if (!ok)
          return false; // (a stale copy stays stale: redone next call)
        if (copy.buffer)
          p->retired.push_back(std::move(copy.buffer));
        copy = {std::move(fresh), stamp};
        // The plain filter is read only by this reorder: where it is the
        // library's file-backed weights, its pages go back to the system
        // (a model keeps one copy of each filter, not two).
        release_weight_pages(w, plain);
      }
      weights = copy.buffer->p;
    }
  }
  // The primitive and the cached weights never change once made: run
  // outside the lock.
  dnnl_stream_t stream;
  if (dnnl_stream_create(&stream, c.engine, dnnl_stream_default_flags) != dnnl_success)
    return false;
  Memories mem{c.engine};
  Buffer scratch(dnnl_memory_desc_get_size(&p->scratch_md));
  Buffer src_buf(p->src_reorder ? dnnl_memory_desc_get_size(&p->src_md) : 0);
  Buffer dst_buf(p->dst_reorder ? dnnl_memory_desc_get_size(&p->dst_md) : 0);
  Buffer wei_buf(p->wei_reorder && weights == w ? dnnl_memory_desc_get_size(&p->wei_md) : 0);
  bool ok = true;
  dnnl_memory_t src = mem(p->src_md, p->src_reorder ? src_buf.p : in);
  dnnl_memory_t dst = mem(p->dst_md, p->dst_reorder ? dst_buf.p : out);
  dnnl_memory_t wei = mem(p->wei_md, wei_buf.p ? wei_buf.p : weights);
  if (p->src_reorder)
    ok = ok && mem.ok && run_reorder(p->src_reorder, stream, mem(p->src_user, in), src);
  if (wei_buf.p)
    ok = ok && mem.ok && run_reorder(p->wei_reorder, stream, mem(p->wei_user, w), wei);
  if (ok && mem.ok) {
    std::vector<dnnl_exec_arg_t> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei},
                                      {DNNL_ARG_DST, dst}};
    if (bias)
      args.push_back({DNNL_ARG_BIAS, mem(p->bias_md, bias)});
    if (scratch.p)
      args.push_back({DNNL_ARG_SCRATCHPAD, mem(p->scratch_md, scratch.p)});
    ok = mem.ok && dnnl_primitive_execute(p->conv, stream, int(args.size()),
                                          args.data()) == dnnl_success;
  }
  if (ok && p->dst_reorder)
    ok = mem.ok && run_reorder(p->dst_reorder, stream, dst, mem(p->dst_user, out));
  ok = dnnl_stream_wait(stream) == dnnl_success && ok;
  dnnl_stream_destroy(stream);
  return ok;
}

} // namespace dnnl_conv

/// NCHW-native fp32 convolutions that need no layout change, so they skip
/// oneDNN's per-call reorders of the input and output (measured at more than
/// half of oneDNN's time on MobileNet- and ResNet-style models, whose
/// activations are NCHW): pointwise (1x1, stride 1, unpadded, ungrouped)
/// convolutions as one GEMM per image, and depthwise ones (one input channel
/// per group, 2-D, any kernel, stride, padding and dilation) as a direct
/// kernel with the output columns in SIMD lanes.
namespace direct_conv {

/// Whether `conv` below takes this convolution.
inline bool takes(i64 cin, i64 cout, i64 groups, const Window &win) {
  if (win.spatial == 2 && groups == cin && cout == cin && groups > 1)
    return true; // depthwise, multiplier 1
  if (groups != 1)
    return false;
  for (int s = 0; s < win.spatial; ++s)
    if (win.kernel[s] != 1 || win.stride[s] != 1 || win.pad_lo[s] != 0 ||
        win.in[s] != win.out[s])
      return false;
  return true;
}

/// Constant filters of pointwise convolutions in the GEMM's packed-A layout,
/// by the pointer and shape of the plain ones: packed on first use instead of
/// on every call (8% of MobileNet's time), the plain pages handed back to the
/// system. Only the library's file-backed weights (BatchNorm-folded filters
/// are): a filter in the caller's memory (thunder.compile reads the module's
/// tensors in place, holding no second copy) is packed per call.
struct PackedFilters {
  std::mutex mutex;
  std::map<std::tuple<const float *, i64, i64>, std::vector<float>> filters;
};
inline PackedFilters &packed_filters() {
  static PackedFilters cache;
  return cache;
}

/// out[b] = w [cout, cin] @ in[b] [cin, HW] (+ bias per row), the bias and
/// then `epi` applied to each register tile of the GEMM as it is finished.
inline void pointwise(const float *in, const float *w, const float *bias, float *out,
                      i64 batch, i64 cin, i64 cout, i64 hw, bool weights_constant,
                      thunder_gemm::EpilogueRef epi) {
  const float *packed = nullptr;
  const size_t bytes = static_cast<size_t>(cout * cin) * sizeof(float);
  // (File-backed weights are the same bytes at the same address for as long
  // as they are file-backed: a copy made from them stays right.)
  if (weights_constant && bytes && FileBackedWeights::get().contains(w, bytes)) {
    PackedFilters &cache = packed_filters();
    std::lock_guard<std::mutex> lock(cache.mutex);
    std::vector<float> &slot = cache.filters[{w, cout, cin}];
    if (slot.empty()) {
      slot.resize(static_cast<size_t>(cout * cin));
      thunder_gemm::pack_a_once_f32(w, cout, cin, slot.data());
      release_weight_pages(w, bytes);
    }
    packed = slot.data();
  }
  for (i64 b = 0; b < batch; ++b) {
    float *image = out + b * cout * hw;
    if (packed) {
      // The bias starts the accumulators; the kernel's epilogue per tile
      // (none, not even a call per tile, when the kernel has none).
      auto tile = [&](i64 r0, i64 r1, i64 c0, i64 c1) {
        epi(b * cout + r0, b * cout + r1, c0, c1);
      };
      const thunder_gemm::EpilogueRef per_tile =
          epi.fn ? thunder_gemm::EpilogueRef(tile).clamping(epi) : thunder_gemm::EpilogueRef();
      thunder_gemm::gemm_packed_a(packed, in + b * cin * hw, image, cout, hw, cin, bias,
                                  per_tile);
      continue;
    }
    auto tile = [&](i64 r0, i64 r1, i64 c0, i64 c1) {
      if (bias)
        for (i64 r = r0; r < r1; ++r) {
          float *row = image + r * hw;
          const float add = bias[r];
#pragma omp simd
          for (i64 j = c0; j < c1; ++j)
            row[j] += add;
        }
      epi(b * cout + r0, b * cout + r1, c0, c1);
    };
    thunder_gemm::matmul_f32(w, in + b * cin * hw, nullptr, image, 1, cout, hw, cin, false,
                             false, false, tile);
  }
}

/// The output columns [lo, hi) whose input column ow * stride - pad + k * dil
/// lies inside [0, in).
inline void valid_range(i64 out, i64 in, i64 stride, i64 pad, i64 koff, i64 *lo,
                        i64 *hi) {
  // ow * stride >= pad - koff and ow * stride <= in - 1 + pad - koff.
  i64 a = pad - koff, b = in - 1 + pad - koff;
  *lo = a <= 0 ? 0 : (a + stride - 1) / stride;
  *hi = b < 0 ? 0 : std::min<i64>(out, b / stride + 1);
  if (*hi < *lo)
    *hi = *lo;
}

/// Depthwise 2-D: each (image, channel) plane convolved with its own K_h x K_w
/// filter. Strides and dilations become contiguous sweeps by splitting the
/// zero-padded plane into its sh x sw phases (P[a][b][y][x] = padded input at
/// row y*sh + a, column x*sw + b): filter tap (i, j) then reads one phase at
/// a fixed offset, for every output. The output is computed on a "wide" grid
/// whose rows are a phase's width (the columns past the output's are
/// discarded), so each tap is one long SIMD FMA sweep over the whole plane,
/// whatever the row length (7-wide rows vectorize as well as 112-wide ones).
/// The kernel keeps kBlock floats of the output in registers (simd::vf, the
/// machine's own width): 64 (4 zmm with AVX-512, 8 ymm with AVX2) or 48 (12
/// xmm otherwise: 16 xmm registers also hold the filter tap and a load).
using simd::kLanes;

/// dst[0, n) = src[0, n), for the short rows of a depthwise plane (7-56
/// floats): whole vectors, the last one overlapping the one before, rather
/// than a call into memmove per row, which took more time than the taps on
/// 14 x 14 and 7 x 7 planes.
inline void copy_short(const float *src, i64 n, float *dst) {
  if (n < kLanes) {
    // Two overlapping pieces of 8 or 4 floats (a 14-float row with AVX-512).
    if (n >= 8) {
      std::memcpy(dst, src, 32);
      std::memcpy(dst + n - 8, src + n - 8, 32);
    } else if (n >= 4) {
      std::memcpy(dst, src, 16);
      std::memcpy(dst + n - 4, src + n - 4, 16);
    } else {
      for (i64 i = 0; i < n; ++i)
        dst[i] = src[i];
    }
    return;
  }
  for (i64 i = 0; i + kLanes < n; i += kLanes)
    simd::store(dst + i, simd::load(src + i));
  simd::store(dst + n - kLanes, simd::load(src + n - kLanes));
}

constexpr int kAccumulators = kLanes == 4 ? 12 : 64 / kLanes;
constexpr i64 kBlock = kAccumulators * kLanes;

inline void depthwise(const float *in, const float *w, const float *bias, float *out,
                      i64 batch, i64 channels, const Window &win,
                      thunder_gemm::EpilogueRef epi) {
  const i64 ih = win.in[0], iw = win.in[1], oh = win.out[0], ow = win.out[1];
  const i64 kh = win.kernel[0], kw = win.kernel[1], sh = win.stride[0],
            sw = win.stride[1], ph = win.pad_lo[0], pw = win.pad_lo[1],
            dh = win.dilation[0], dw = win.dilation[1];
  const i64 ro_max = ((kh - 1) * dh) / sh, co_max = ((kw - 1) * dw) / sw;
  // A phase: Hq rows (one more than the taps reach: the wide grid's last
  // row runs past its end) of Wq columns.
  const i64 wq = ow + co_max, hq = oh + ro_max + 1, phase = hq * wq;
  // The wide grid in whole blocks of kBlock floats; the phases' buffer has
  // as much slack at its end, for the last block's reads.
  const i64 wide = (oh * wq + kBlock - 1) / kBlock * kBlock;
  if (oh <= 0 || ow <= 0)
    return;
  const i64 taps = kh * kw;
  std::vector<i64> offs(static_cast<size_t>(taps));
  for (i64 i = 0; i < kh; ++i)
    for (i64 j = 0; j < kw; ++j)
      offs[i * kw + j] = (((i * dh) % sh) * sw + (j * dw) % sw) * phase +
                         ((i * dh) / sh) * wq + (j * dw) / sw;
#pragma omp parallel if (batch * channels * wide * taps > 32768)
  {
    // Zeros where no input falls (the padding, the phases' columns and rows
    // past it, the slack): the same places in every plane, so they are
    // written once; each plane then copies only its input rows' columns.
    std::vector<float> buf(static_cast<size_t>(wide + sh * sw * phase + kBlock), 0.0f);
    float *acc = buf.data(), *phases = acc + wide;
#pragma omp for collapse(2)
    for (i64 b = 0; b < batch; ++b)
      for (i64 c = 0; c < channels; ++c) {
        const float *x = in + (b * channels + c) * ih * iw;
        const float *f = w + c * kh * kw;
        float *y = out + (b * channels + c) * oh * ow;
        for (i64 a = 0; a < sh; ++a)
          for (i64 bb = 0; bb < sw; ++bb) {
            float *pp = phases + (a * sw + bb) * phase;
            i64 lo, hi;
            valid_range(wq, iw, sw, pw, bb, &lo, &hi);
            for (i64 yq = 0; yq < hq; ++yq) {
              const i64 row = yq * sh + a - ph;
              float *dst = pp + yq * wq;
              if (row < 0 || row >= ih)
                continue;
              const float *xr = x + row * iw;
              if (sw == 1) {
                copy_short(xr + lo + bb - pw, hi - lo, dst + lo);
              } else if (sw == 2) {
                // A literal stride: the compiler loads whole vectors and
                // permutes, where a variable one gathers element by element.
                const float *xs = xr + bb - pw;
#pragma omp simd
                for (i64 xq = lo; xq < hi; ++xq)
                  dst[xq] = xs[2 * xq];
              } else {
#pragma omp simd
                for (i64 xq = lo; xq < hi; ++xq)
                  dst[xq] = xr[xq * sw + bb - pw];
              }
            }
          }
        // Each block of the wide grid in registers through all the taps.
        const float b0 = bias ? bias[c] : 0.0f;
        const simd::vf clamp_lo = simd::splat(epi.lo), clamp_hi = simd::splat(epi.hi);
        for (i64 k0 = 0; k0 < wide; k0 += kBlock) {
          simd::vf a[kAccumulators];
#pragma GCC unroll 16
          for (int v = 0; v < kAccumulators; ++v)
            a[v] = simd::splat(b0);
          for (i64 t = 0; t < taps; ++t) {
            const float *src = phases + offs[t] + k0;
            const simd::vf fv = simd::splat(f[t]);
#pragma GCC unroll 16
            for (int v = 0; v < kAccumulators; ++v)
              a[v] += fv * simd::load(src + v * kLanes);
          }
          if (epi.clamp_only) {
            // (A comparison with NaN is false: NaN kept.)
#pragma GCC unroll 16
            for (int v = 0; v < kAccumulators; ++v) {
              a[v] = a[v] < clamp_lo ? clamp_lo : a[v];
              a[v] = a[v] > clamp_hi ? clamp_hi : a[v];
            }
          }
#pragma GCC unroll 16
          for (int v = 0; v < kAccumulators; ++v)
            simd::store(acc + k0 + v * kLanes, a[v]);
        }
        for (i64 r = 0; r < oh; ++r)
          copy_short(acc + r * wq, ow, y + r * ow);
        // The plane is still in cache: its epilogue runs now.
        if (!epi.clamp_only)
          epi(b * channels + c, b * channels + c + 1, 0, oh * ow);
      }
  }
}

inline void conv(const float *in, const float *w, const float *bias, float *out,
                 i64 batch, i64 cin, i64 cout, i64 groups, const Window &win,
                 bool weights_constant, thunder_gemm::EpilogueRef epi) {
  if (groups == 1) {
    i64 hw = 1;
    for (int s = 0; s < win.spatial; ++s)
      hw *= win.in[s];
    pointwise(in, w, bias, out, batch, cin, cout, hw, weights_constant, epi);
  } else {
    depthwise(in, w, bias, out, batch, cin, win, epi);
  }
}

} // namespace direct_conv

/// `epi` (the kernel's fused epilogue, when it has one) over all of `out`
/// viewed as [rows, cols], a row per thread: for the convolutions whose
/// kernels do not call it on their own pieces of the output.
inline void epilogue_rows(thunder_gemm::EpilogueRef epi, i64 rows, i64 cols) {
  if (!epi.fn)
    return;
#pragma omp parallel for schedule(static) if (rows * cols > 32768)
  for (i64 r = 0; r < rows; ++r)
    epi(r, r + 1, 0, cols);
}

/// out[b][p][c] = in[b][c][p] (to_last) or out[b][c][p] = in[b][p][c], over
/// `positions` p and `channels` c: a tensor between channels first and last.
template <class T>
void transpose_channels(const T *in, T *out, i64 batch, i64 channels, i64 positions,
                        bool to_last) {
  const i64 shape[3] = {batch, to_last ? channels : positions,
                        to_last ? positions : channels};
  const i64 perm[3] = {0, 2, 1};
  transpose(in, shape, 3, perm, out);
}

/// out = conv(in, w) + bias over 1-3 spatial dims, NC[D]HW input and output
/// (or N[D]HWC: `layout` below), O I/groups [D]H W weights. f32 pointwise
/// and depthwise convolutions run NCHW-native (direct_conv above) when
/// `layout` is kChannelsFirst, other f32
/// ones go to oneDNN (dnnl_conv above); what it does not take (f64, f16, bf16, f8, integers, or a shape
/// oneDNN refuses) runs as im2col + GEMM per group: each group's input
/// patches unrolled into a [cin_g * kernel, out_size] matrix, then one GEMM
/// with the weights. (conv below is what kernels call.)
///
/// `epi`, a kernel's fused epilogue, is then applied to every element of
/// `out` once, in pieces: epi(r0, r1, c0, c1) for rows [r0, r1) and columns
/// [c0, c1) of out viewed as [batch * cout, output positions], after the
/// bias; pieces may run at once on several threads. The direct kernels call
/// it on each piece they finish (a GEMM tile, a depthwise plane), while it
/// is in cache; the others after the whole convolution.
///
/// `layout` (ConvLayout's bits) says which of in and out are channels last.
/// The compiler asks for it where oneDNN runs the convolution, and for the
/// output only where `epi` is elementwise over same-shaped tensors kept so
/// too (then the order of the elements does not matter to it).
template <class T>
void conv_inline(const T *in, const T *w, const T *bias, T *out, i64 batch, i64 cin,
                 i64 cout, i64 groups, const Window &win, bool weights_constant,
                 thunder_gemm::EpilogueRef epi = {}, int layout = kChannelsFirst) {
  i64 in_size = 1, out_size = 1, k_size = 1;
  for (int s = 0; s < win.spatial; ++s) {
    in_size *= win.in[s];
    out_size *= win.out[s];
    k_size *= win.kernel[s];
  }
  if constexpr (std::is_same_v<T, float>) {
    if (layout == kChannelsFirst && direct_conv::takes(cin, cout, groups, win)) {
      direct_conv::conv(in, w, bias, out, batch, cin, cout, groups, win, weights_constant,
                        epi);
      return;
    }
    if (dnnl_conv::conv(in, w, bias, out, batch, cin, cout, groups, win,
                        weights_constant, layout)) {
      epilogue_rows(epi, batch * cout, out_size);
      return;
    }
  }
  if (layout != kChannelsFirst) {
    // What oneDNN did not take runs channels first, on copies.
    std::vector<T> first_in, first_out;
    const T *x = in;
    if (layout & kInputChannelsLast) {
      first_in.resize(static_cast<size_t>(batch * cin * in_size));
      transpose_channels(in, first_in.data(), batch, cin, in_size, false);
      x = first_in.data();
    }
    if (!(layout & kOutputChannelsLast)) {
      conv_inline(x, w, bias, out, batch, cin, cout, groups, win, weights_constant, epi);
      return;
    }
    first_out.resize(static_cast<size_t>(batch * cout * out_size));
    conv_inline(x, w, bias, first_out.data(), batch, cin, cout, groups, win,
                weights_constant);
    transpose_channels(first_out.data(), out, batch, cout, out_size, true);
    epilogue_rows(epi, batch * cout, out_size);
    return;
  }
  i64 cin_g = cin / groups, cout_g = cout / groups, rows = cin_g * k_size;
  std::vector<T> cols(static_cast<size_t>(rows * out_size));
  for (i64 b = 0; b < batch; ++b)
    for (i64 g = 0; g < groups; ++g) {
      const T *x = in + (b * cin + g * cin_g) * in_size;
#pragma omp parallel for if (rows * out_size > 65536)
      for (i64 r = 0; r < rows; ++r) {
        i64 c = r / k_size, kflat = r % k_size;
        i64 kidx[3] = {0, 0, 0};
        for (int s = win.spatial - 1; s >= 0; --s) {
          kidx[s] = kflat % win.kernel[s];
          kflat /= win.kernel[s];
        }
        for (i64 o = 0; o < out_size; ++o) {
          i64 oflat = o, off = 0;
          bool inside = true;
          i64 mul = 1;
          for (int s = win.spatial - 1; s >= 0; --s) {
            i64 oi = oflat % win.out[s];
            oflat /= win.out[s];
            i64 ii = oi * win.stride[s] - win.pad_lo[s] + kidx[s] * win.dilation[s];
            inside = inside && ii >= 0 && ii < win.in[s];
            off += ii * mul;
            mul *= win.in[s];
          }
          cols[r * out_size + o] = inside ? x[c * in_size + off] : T(0);
        }
      }
      matmul(w + g * cout_g * rows, cols.data(),
             out + (b * cout + g * cout_g) * out_size, 1, cout_g, out_size, rows,
             false, false, false);
    }
  if (bias)
    for (i64 b = 0; b < batch; ++b)
#pragma omp parallel for if (cout * out_size > 65536)
      for (i64 c = 0; c < cout; ++c)
        for (i64 o = 0; o < out_size; ++o) {
          T &v = out[(b * cout + c) * out_size + o];
          v = st<T>(cv(v) + cv(bias[c]));
        }
  epilogue_rows(epi, batch * cout, out_size);
}

/// A convolution (conv_inline's, with its epilogue) of a type other than
/// fp32, or of any type when THUNDER_GEMM_APART is 0; fp32 ones take
/// thunder_cpu_conv_api.h's overload, through the driver compiled once per
/// library.
template <class T>
void conv(const T *in, const T *w, const T *bias, T *out, i64 batch, i64 cin,
          i64 cout, i64 groups, const Window &win, bool weights_constant = false,
          thunder_gemm::EpilogueRef epi = {}, int layout = kChannelsFirst) {
  conv_inline(in, w, bias, out, batch, cin, cout, groups, win, weights_constant, epi, layout);
}

} // namespace thunder_cpu

// Pooling (pool2d_rows, pool2d_channels_last, pool_inline, pool): a part of
// this header, kept in a file of its own.
#include "thunder_cpu_pool.h"

#endif // THUNDER_CPU_CONV_H
