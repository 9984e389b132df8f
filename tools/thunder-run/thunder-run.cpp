// thunder-run: load a compiled model, run it on random or given inputs, print, check, time, save.
#include "Npz.h"

#include "thunder-c/runtime.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace npz = thunder::npz;

namespace {

const char kUsage[] = R"(usage: thunder-run path/libmodel.so [options]

Loads a model compiled by Thunder, prints its signature, runs it once and prints
each output's shape, first values and min/max/mean.

options:
  --inputs FILE.npz     inputs by name (or in order); default: random inputs
  --dim SYMBOL=VALUE    a dynamic dim's value for random inputs (repeatable);
                        default: the symbol's minimum, clamped to at least 1
  --seed S              seed of the random inputs and of the model's random
                        numbers (torch.rand/randn/randperm in it; default 0)
  --check FILE.npz      compare the outputs with these arrays (by name, or in
                        order) like numpy.allclose; exit 1 on mismatch
  --rtol R, --atol A    tolerances of --check (default 1e-05 and 1e-08)
  --save FILE.npz       write the outputs (bfloat16 as '<u2' bits, float8 as
                        '|u1' bits: numpy has neither type)
  --bench N             time N runs after the warmup: median, min, p90
  --warmup W            untimed runs before --bench (default 10)
  --threads T           with --bench: T threads run at once, each with its own
                        context; reports per-run latency and total throughput
  --help, --version

Random inputs: floats uniform in [-1, 1], integers uniform in [0, 10), bools
fair coin flips. .npz files are read and written uncompressed (np.savez, not
np.savez_compressed). Only CPU models run here so far.
)";

[[noreturn]] void die(const std::string &message) {
  std::fflush(stdout); // what was printed so far comes first
  std::fprintf(stderr, "thunder-run: error: %s\n", message.c_str());
  std::exit(1);
}

[[noreturn]] void usageError(const std::string &message) {
  std::fprintf(stderr, "thunder-run: %s\n(thunder-run --help for usage)\n", message.c_str());
  std::exit(2);
}

struct Options {
  std::string model, inputs, check, save;
  double rtol = 1e-5, atol = 1e-8;
  int64_t bench = 0, warmup = 10, threads = 1;
  uint64_t seed = 0;
  std::vector<std::pair<std::string, int64_t>> dims;
};

int64_t parseInt(const std::string &flag, const std::string &text, int64_t min) {
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno || value < min)
    usageError(flag + " expects an integer of at least " + std::to_string(min) + ", got '" +
               text + "'");
  return value;
}

double parseDouble(const std::string &flag, const std::string &text) {
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !(value >= 0))
    usageError(flag + " expects a non-negative number, got '" + text + "'");
  return value;
}

Options parseArgs(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg == "--version") {
      std::printf("thunder-run (Thunder runtime %s, model ABI %d)\n", thunder_runtime_version(),
                  THUNDER_ABI_VERSION);
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0) {
      if (!options.model.empty())
        usageError("more than one model: '" + options.model + "' and '" + arg + "'");
      options.model = arg;
      continue;
    }
    size_t equals = arg.find('=');
    if (equals != std::string::npos) {
      value = arg.substr(equals + 1);
      arg = arg.substr(0, equals);
    } else {
      if (i + 1 >= argc)
        usageError(arg + " needs a value");
      value = argv[++i];
    }
    if (arg == "--inputs")
      options.inputs = value;
    else if (arg == "--check")
      options.check = value;
    else if (arg == "--save")
      options.save = value;
    else if (arg == "--rtol")
      options.rtol = parseDouble(arg, value);
    else if (arg == "--atol")
      options.atol = parseDouble(arg, value);
    else if (arg == "--bench")
      options.bench = parseInt(arg, value, 1);
    else if (arg == "--warmup")
      options.warmup = parseInt(arg, value, 0);
    else if (arg == "--threads")
      options.threads = parseInt(arg, value, 1);
    else if (arg == "--seed")
      options.seed = static_cast<uint64_t>(parseInt(arg, value, 0));
    else if (arg == "--dim") {
      size_t at = value.find('=');
      if (at == std::string::npos || at == 0)
        usageError("--dim expects SYMBOL=VALUE, got '" + value + "'");
      options.dims.emplace_back(value.substr(0, at),
                                parseInt("--dim " + value.substr(0, at), value.substr(at + 1), 0));
    } else {
      usageError("unknown option " + arg);
    }
  }
  if (options.model.empty())
    usageError("no model given");
  return options;
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

/// A host tensor with 64-byte aligned storage.
struct HostTensor {
  std::string name;
  int32_t dtype = THUNDER_DTYPE_FLOAT32;
  std::vector<int64_t> shape;
  std::unique_ptr<void, decltype(&std::free)> storage{nullptr, &std::free};
  size_t bytes = 0;

  HostTensor() = default;
  HostTensor(std::string name, int32_t dtype, std::vector<int64_t> shape)
      : name(std::move(name)), dtype(dtype), shape(std::move(shape)) {
    bytes = static_cast<size_t>(numElements()) * thunder_dtype_size(dtype);
    void *ptr = nullptr;
    if (bytes && posix_memalign(&ptr, 64, (bytes + 63) / 64 * 64) != 0)
      die("out of memory for a tensor of " + std::to_string(bytes) + " bytes");
    storage.reset(ptr);
    if (ptr)
      std::memset(ptr, 0, bytes);
  }
  int64_t numElements() const {
    int64_t count = 1;
    for (int64_t dim : shape)
      count *= dim;
    return count;
  }
  void *data() const { return storage.get(); }
  double at(size_t i) const { return npz::loadElement(data(), dtype, i); }
  thunder_tensor raw() const {
    return {data(), dtype, static_cast<int32_t>(shape.size()), shape.data()};
  }
};

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t d = 0; d < shape.size(); ++d)
    text += (d ? ", " : "") + std::to_string(shape[d]);
  return text + "]";
}

std::string formatDesc(const thunder_tensor_desc &desc) {
  std::string text = std::string(thunder_dtype_name(desc.dtype)) + "[";
  for (int32_t d = 0; d < desc.rank; ++d) {
    text += d ? ", " : "";
    if (desc.shape[d] >= 0)
      text += std::to_string(desc.shape[d]);
    else
      text += desc.dim_symbols[d][0] ? desc.dim_symbols[d] : "?";
  }
  return text + "]";
}

std::string formatNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

std::vector<thunder_tensor> raw(const std::vector<HostTensor> &tensors) {
  std::vector<thunder_tensor> result;
  for (const HostTensor &tensor : tensors)
    result.push_back(tensor.raw());
  return result;
}

//===----------------------------------------------------------------------===//
// Signature and inputs
//===----------------------------------------------------------------------===//

void printSignature(const thunder_model *model) {
  std::printf("model %s (target %s, device %s; runtime %s)\n", thunder_model_name(model),
              thunder_model_target(model), thunder_device_name(thunder_model_device(model)),
              thunder_runtime_version());
  std::printf("  runs on %s\n", thunder_model_device_description(model));
  for (int kind = 0; kind < 2; ++kind) {
    int32_t count = kind ? thunder_model_num_outputs(model) : thunder_model_num_inputs(model);
    std::printf("  %s:\n", kind ? "outputs" : "inputs");
    for (int32_t i = 0; i < count; ++i) {
      const thunder_tensor_desc &desc =
          kind ? *thunder_model_output(model, i) : *thunder_model_input(model, i);
      std::string bounds;
      for (int32_t d = 0; d < desc.rank && !kind; ++d)
        if (desc.shape[d] < 0)
          bounds += std::string(bounds.empty() ? "  " : ", ") +
                    (desc.dim_symbols[d][0] ? desc.dim_symbols[d] : "?") + " in [" +
                    std::to_string(desc.dim_min[d]) + ", " +
                    (desc.dim_max[d] >= 0 ? std::to_string(desc.dim_max[d]) + "]" : "inf)");
      std::printf("    %d %s: %s%s\n", i, desc.name, formatDesc(desc).c_str(), bounds.c_str());
    }
  }
}

/// Random inputs: dynamic dims from --dim, or their symbol's minimum clamped to at least 1.
std::vector<HostTensor> randomInputs(const thunder_model *model, const Options &options) {
  int32_t count = thunder_model_num_inputs(model);
  // Each symbol's bounds: the intersection over the dims that carry it.
  std::map<std::string, std::pair<int64_t, int64_t>> bounds;
  for (int32_t i = 0; i < count; ++i) {
    const thunder_tensor_desc &desc = *thunder_model_input(model, i);
    for (int32_t d = 0; d < desc.rank; ++d) {
      if (desc.shape[d] >= 0 || !desc.dim_symbols[d][0])
        continue;
      auto [it, inserted] =
          bounds.try_emplace(desc.dim_symbols[d], desc.dim_min[d], desc.dim_max[d]);
      if (!inserted) {
        it->second.first = std::max(it->second.first, desc.dim_min[d]);
        if (desc.dim_max[d] >= 0)
          it->second.second = it->second.second >= 0
                                  ? std::min(it->second.second, desc.dim_max[d])
                                  : desc.dim_max[d];
      }
    }
  }
  auto fromMinimum = [](int64_t lo, int64_t hi) {
    int64_t value = std::max<int64_t>(lo, 1);
    return hi >= 0 && value > hi ? lo : value;
  };
  std::map<std::string, int64_t> values;
  for (const auto &[symbol, value] : options.dims) {
    if (!bounds.count(symbol)) {
      std::string known;
      for (const auto &entry : bounds)
        known += (known.empty() ? "" : ", ") + entry.first;
      die("--dim " + symbol + ": the model has no dynamic dim with that symbol" +
          (known.empty() ? std::string(" (it has none)") : " (its symbols: " + known + ")"));
    }
    values[symbol] = value;
  }
  for (const auto &[symbol, range] : bounds) {
    if (values.count(symbol)) {
      std::printf("  %s = %lld (--dim)\n", symbol.c_str(), static_cast<long long>(values[symbol]));
      continue;
    }
    values[symbol] = fromMinimum(range.first, range.second);
    std::printf("  %s = %lld (its minimum, at least 1; set it with --dim %s=N)\n", symbol.c_str(),
                static_cast<long long>(values[symbol]), symbol.c_str());
  }

  std::mt19937_64 generator(options.seed);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> integer(0, 9);
  std::bernoulli_distribution coin(0.5);
  std::vector<HostTensor> inputs;
  for (int32_t i = 0; i < count; ++i) {
    const thunder_tensor_desc &desc = *thunder_model_input(model, i);
    std::vector<int64_t> shape;
    for (int32_t d = 0; d < desc.rank; ++d) {
      if (desc.shape[d] >= 0)
        shape.push_back(desc.shape[d]);
      else if (desc.dim_symbols[d][0])
        shape.push_back(values[desc.dim_symbols[d]]);
      else
        shape.push_back(fromMinimum(desc.dim_min[d], desc.dim_max[d]));
    }
    HostTensor tensor(desc.name, desc.dtype, shape);
    bool isBool = desc.dtype == THUNDER_DTYPE_BOOL;
    bool isInt = desc.dtype == THUNDER_DTYPE_INT8 || desc.dtype == THUNDER_DTYPE_INT32 ||
                 desc.dtype == THUNDER_DTYPE_INT64;
    for (int64_t e = 0; e < tensor.numElements(); ++e) {
      double value = isBool  ? static_cast<double>(coin(generator))
                     : isInt ? static_cast<double>(integer(generator))
                             : real(generator);
      npz::storeElement(tensor.data(), desc.dtype, static_cast<size_t>(e), value);
    }
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

/// Which array of `arrays` goes with each descriptor: by name if all names are there, else in
/// order if the counts agree.
std::vector<const npz::NamedArray *>
matchArrays(const std::string &file, const std::vector<npz::NamedArray> &arrays,
            const std::vector<const thunder_tensor_desc *> &descs, const char *kind) {
  std::vector<const npz::NamedArray *> matched;
  for (const thunder_tensor_desc *desc : descs) {
    auto it = std::find_if(arrays.begin(), arrays.end(),
                           [&](const npz::NamedArray &a) { return a.name == desc->name; });
    if (it == arrays.end())
      break;
    matched.push_back(&*it);
  }
  if (matched.size() == descs.size())
    return matched;
  std::string have, want;
  for (const npz::NamedArray &array : arrays)
    have += (have.empty() ? "" : ", ") + array.name;
  for (const thunder_tensor_desc *desc : descs)
    want += (want.empty() ? "" : ", ") + std::string(desc->name);
  if (arrays.size() != descs.size())
    die(file + " has arrays (" + have + "), but the model's " + kind + "s are (" + want +
        "): name them alike, or give one array per " + kind + " in order");
  std::printf("note: %s does not name every %s (%s); taking its arrays in order as (%s)\n",
              file.c_str(), kind, have.c_str(), want.c_str());
  matched.clear();
  for (const npz::NamedArray &array : arrays)
    matched.push_back(&array);
  return matched;
}

std::string describeDescr(const std::string &descr) {
  int32_t dtype = npz::dtypeForDescr(descr, -1);
  if (dtype >= 0)
    return "'" + descr + "' (" + thunder_dtype_name(dtype) + ")";
  return "'" + descr + "'" + (descr == "<u2" ? " (uint16, read as bfloat16 bits)" : "") +
         (descr == "|u1" ? " (uint8, read as float8 bits)" : "");
}

std::vector<HostTensor> fileInputs(const thunder_model *model, const Options &options) {
  std::vector<npz::NamedArray> arrays;
  std::string error;
  if (!npz::readNpz(options.inputs, arrays, error))
    die(error);
  if (!options.dims.empty())
    std::printf("note: --dim is ignored: the shapes come from %s\n", options.inputs.c_str());
  std::vector<const thunder_tensor_desc *> descs;
  for (int32_t i = 0; i < thunder_model_num_inputs(model); ++i)
    descs.push_back(thunder_model_input(model, i));
  std::vector<const npz::NamedArray *> matched =
      matchArrays(options.inputs, arrays, descs, "input");
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < descs.size(); ++i) {
    const npz::Array &array = matched[i]->array;
    int32_t expected = descs[i]->dtype;
    if (npz::dtypeForDescr(array.descr, expected) != expected)
      die("input " + std::to_string(i) + " ('" + descs[i]->name + "'): " + options.inputs +
          " holds " + describeDescr(array.descr) + ", but the model expects " +
          thunder_dtype_name(expected));
    HostTensor tensor(descs[i]->name, expected, array.shape);
    std::memcpy(tensor.data(), array.data.data(), tensor.bytes);
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

//===----------------------------------------------------------------------===//
// Outputs: print, save, check
//===----------------------------------------------------------------------===//

std::vector<HostTensor> allocateOutputs(const thunder_model *model,
                                        const std::vector<HostTensor> &inputs) {
  int32_t count = thunder_model_num_outputs(model);
  std::vector<std::vector<int64_t>> shapes;
  std::vector<int64_t *> pointers;
  for (int32_t o = 0; o < count; ++o)
    shapes.emplace_back(static_cast<size_t>(thunder_model_output(model, o)->rank));
  for (std::vector<int64_t> &shape : shapes)
    pointers.push_back(shape.data());
  std::vector<thunder_tensor> in = raw(inputs);
  if (thunder_model_output_shapes(model, in.data(), static_cast<int32_t>(in.size()),
                                  pointers.data()) != THUNDER_OK)
    die(thunder_last_error());
  std::vector<HostTensor> outputs;
  for (int32_t o = 0; o < count; ++o) {
    const thunder_tensor_desc *desc = thunder_model_output(model, o);
    outputs.emplace_back(desc->name, desc->dtype, shapes[o]);
  }
  return outputs;
}

void printTensor(const char *kind, size_t index, const HostTensor &tensor) {
  std::printf("%s %zu %s: %s %s\n", kind, index, tensor.name.c_str(),
              thunder_dtype_name(tensor.dtype), formatShape(tensor.shape).c_str());
  auto count = static_cast<size_t>(tensor.numElements());
  if (count == 0) {
    std::printf("  (no elements)\n");
    return;
  }
  std::string values;
  for (size_t i = 0; i < std::min<size_t>(count, 8); ++i)
    values += (i ? ", " : "") + formatNumber(tensor.at(i));
  std::printf("  values: %s%s\n", values.c_str(), count > 8 ? ", ..." : "");
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  size_t nans = 0;
  for (size_t i = 0; i < count; ++i) {
    double value = tensor.at(i);
    if (std::isnan(value)) {
      ++nans;
      continue;
    }
    lo = std::min(lo, value);
    hi = std::max(hi, value);
    sum += value;
  }
  std::printf("  min %s  max %s  mean %s", formatNumber(lo).c_str(), formatNumber(hi).c_str(),
              formatNumber(count > nans ? sum / static_cast<double>(count - nans) : NAN).c_str());
  if (nans)
    std::printf("  (%zu NaN)", nans);
  std::printf("\n");
}

void save(const std::string &path, const std::vector<HostTensor> &outputs) {
  std::vector<npz::NamedArray> arrays;
  for (const HostTensor &output : outputs) {
    npz::NamedArray array;
    array.name = output.name;
    array.array.descr = npz::descrForDType(output.dtype);
    array.array.shape = output.shape;
    const auto *bytes = static_cast<const uint8_t *>(output.data());
    array.array.data.assign(bytes, bytes + output.bytes);
    arrays.push_back(std::move(array));
  }
  std::string error;
  if (!npz::writeNpz(path, arrays, error))
    die(error);
  std::printf("saved %zu output%s to %s\n", outputs.size(), outputs.size() == 1 ? "" : "s",
              path.c_str());
}

/// numpy.allclose(output, reference, rtol, atol, equal_nan=True) per output; true if all pass.
bool check(const thunder_model *model, const Options &options,
           const std::vector<HostTensor> &outputs) {
  std::vector<npz::NamedArray> arrays;
  std::string error;
  if (!npz::readNpz(options.check, arrays, error))
    die(error);
  std::vector<const thunder_tensor_desc *> descs;
  for (int32_t o = 0; o < thunder_model_num_outputs(model); ++o)
    descs.push_back(thunder_model_output(model, o));
  std::vector<const npz::NamedArray *> matched =
      matchArrays(options.check, arrays, descs, "output");
  size_t failed = 0;
  for (size_t o = 0; o < outputs.size(); ++o) {
    const HostTensor &output = outputs[o];
    const npz::Array &reference = matched[o]->array;
    std::printf("check %s against %s: ", output.name.c_str(), matched[o]->name.c_str());
    int32_t referenceType = npz::dtypeForDescr(reference.descr, output.dtype);
    if (referenceType < 0) {
      std::printf("FAIL (the reference's dtype %s cannot be compared)\n",
                  describeDescr(reference.descr).c_str());
      ++failed;
      continue;
    }
    if (reference.shape != output.shape) {
      std::printf("FAIL (shape %s, reference shape %s)\n", formatShape(output.shape).c_str(),
                  formatShape(reference.shape).c_str());
      ++failed;
      continue;
    }
    double maxAbs = 0, maxRel = 0;
    size_t mismatches = 0, count = static_cast<size_t>(output.numElements());
    for (size_t i = 0; i < count; ++i) {
      double a = output.at(i), b = npz::loadElement(reference.data.data(), referenceType, i);
      if (std::isnan(a) || std::isnan(b)) {
        mismatches += std::isnan(a) != std::isnan(b);
        continue;
      }
      if (a == b) // also equal infinities
        continue;
      double diff = std::fabs(a - b);
      maxAbs = std::max(maxAbs, diff);
      maxRel = std::max(maxRel, b != 0 ? diff / std::fabs(b) : INFINITY);
      mismatches += !(diff <= options.atol + options.rtol * std::fabs(b));
    }
    std::printf("max abs err %s, max rel err %s, %zu of %zu elements outside rtol %s atol %s: "
                "%s\n",
                formatNumber(maxAbs).c_str(), formatNumber(maxRel).c_str(), mismatches, count,
                formatNumber(options.rtol).c_str(), formatNumber(options.atol).c_str(),
                mismatches ? "FAIL" : "PASS");
    failed += mismatches != 0;
  }
  if (failed)
    std::printf("check: FAIL (%zu of %zu outputs)\n", failed, outputs.size());
  else
    std::printf("check: PASS\n");
  return failed == 0;
}

//===----------------------------------------------------------------------===//
// Benchmark
//===----------------------------------------------------------------------===//

void bench(const thunder_model *model, const Options &options,
           const std::vector<HostTensor> &inputs) {
  using Clock = std::chrono::steady_clock;
  size_t threads = static_cast<size_t>(options.threads);
  std::vector<std::vector<double>> latencies(threads);
  std::vector<std::string> errors(threads);
  std::atomic<size_t> ready{0};
  std::atomic<bool> go{false};
  std::vector<thunder_tensor> in = raw(inputs);
  Clock::time_point start, end;
  std::vector<Clock::time_point> began(threads), finished(threads);

  auto worker = [&](size_t t) {
    std::vector<HostTensor> outputs = allocateOutputs(model, inputs);
    std::vector<thunder_tensor> out = raw(outputs);
    thunder_context *context = nullptr;
    auto run = [&] {
      return thunder_context_run(context, in.data(), static_cast<int32_t>(in.size()), out.data(),
                                 static_cast<int32_t>(out.size()), nullptr);
    };
    bool ok = thunder_context_create(model, &context) == THUNDER_OK;
    for (int64_t i = 0; ok && i < options.warmup; ++i)
      ok = run() == THUNDER_OK;
    if (!ok)
      errors[t] = thunder_last_error();
    ++ready;
    while (!go.load())
      std::this_thread::yield();
    began[t] = Clock::now();
    for (int64_t i = 0; ok && i < options.bench; ++i) {
      Clock::time_point before = Clock::now();
      ok = run() == THUNDER_OK;
      latencies[t].push_back(std::chrono::duration<double, std::milli>(Clock::now() - before).count());
    }
    finished[t] = Clock::now();
    if (!ok && errors[t].empty())
      errors[t] = thunder_last_error();
    thunder_context_free(context);
  };

  if (threads == 1) {
    // On this thread: it already has an OpenMP team (the load and --check ran
    // here), and a second thread would get a team of its own, the first
    // one's workers idle beside it -- spinning, under OMP_WAIT_POLICY=active
    // (Llama at batch 1 took 476 ms instead of 256).
    go = true;
    worker(0);
  } else {
    std::vector<std::thread> pool;
    for (size_t t = 0; t < threads; ++t)
      pool.emplace_back(worker, t);
    while (ready.load() < threads)
      std::this_thread::yield();
    go = true;
    for (std::thread &thread : pool)
      thread.join();
  }
  start = *std::min_element(began.begin(), began.end());
  end = *std::max_element(finished.begin(), finished.end());
  for (const std::string &error : errors)
    if (!error.empty())
      die("benchmark run failed: " + error);

  std::vector<double> all;
  for (const std::vector<double> &some : latencies)
    all.insert(all.end(), some.begin(), some.end());
  std::sort(all.begin(), all.end());
  auto rank = [&](double q) { // nearest-rank percentile
    size_t index = static_cast<size_t>(std::ceil(q * static_cast<double>(all.size())));
    return all[std::min(all.size() - 1, index ? index - 1 : 0)];
  };
  double seconds = std::chrono::duration<double>(end - start).count();
  std::printf("bench: %lld runs x %zu thread%s after %lld warmup runs each: median %.4f ms, "
              "min %.4f ms, p90 %.4f ms; %.1f runs/s\n",
              static_cast<long long>(options.bench), threads, threads == 1 ? "" : "s",
              static_cast<long long>(options.warmup), rank(0.5), all.front(), rank(0.9),
              seconds > 0 ? static_cast<double>(all.size()) / seconds : 0.0);
}

} // namespace

int main(int argc, char **argv) {
  // Idle OpenMP workers that spin starve OpenBLAS's threads in compiled CPU
  // models; sleeping ones do not -- after a short spin that bridges the gaps
  // between one run's kernels (0.1 ms; python/thunder/__init__.py says why).
  // Explicit settings are kept. Read by libgomp when the model is loaded,
  // below.
  setenv("OMP_WAIT_POLICY", "PASSIVE", /*overwrite=*/0);
  setenv("GOMP_SPINCOUNT", "10000", /*overwrite=*/0);
  Options options = parseArgs(argc, argv);
  thunder_model *model = nullptr;
  if (thunder_model_load(options.model.c_str(), &model) != THUNDER_OK)
    die(thunder_last_error());
  printSignature(model);
  if (thunder_model_uses_random(model)) {
    // Run k (the warmup and bench runs too) draws from (seed, k).
    thunder_model_set_seed(model, options.seed);
    std::printf("random numbers: seed %llu\n", static_cast<unsigned long long>(options.seed));
  }
  if (thunder_model_device(model) != THUNDER_DEVICE_CPU)
    die(std::string("model '") + thunder_model_name(model) + "' runs on " +
        thunder_device_name(thunder_model_device(model)) +
        "; thunder-run runs CPU models only so far (it has no device buffers yet)");

  std::vector<HostTensor> inputs;
  if (options.inputs.empty()) {
    std::printf("random inputs (seed %llu):\n", static_cast<unsigned long long>(options.seed));
    inputs = randomInputs(model, options);
  } else {
    std::printf("inputs from %s\n", options.inputs.c_str());
    inputs = fileInputs(model, options);
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    std::printf("input %zu %s: %s %s\n", i, inputs[i].name.c_str(),
                thunder_dtype_name(inputs[i].dtype), formatShape(inputs[i].shape).c_str());

  std::vector<HostTensor> outputs = allocateOutputs(model, inputs);
  std::vector<thunder_tensor> in = raw(inputs), out = raw(outputs);
  if (thunder_model_run(model, in.data(), static_cast<int32_t>(in.size()), out.data(),
                        static_cast<int32_t>(out.size()), nullptr) != THUNDER_OK)
    die(thunder_last_error());
  for (size_t o = 0; o < outputs.size(); ++o)
    printTensor("output", o, outputs[o]);

  if (!options.save.empty())
    save(options.save, outputs);
  bool passed = options.check.empty() || check(model, options, outputs);
  if (options.bench > 0)
    bench(model, options, inputs);
  thunder_model_free(model);
  return passed ? 0 : 1;
}
