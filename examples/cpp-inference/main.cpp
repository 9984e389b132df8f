// cpp-inference: load a model compiled by thunder-compile, run it on inputs
// read from raw files, and print the outputs.
//
//   cpp-inference out/libmodel.so input0.bin [input1.bin ...]
//
// Each input file holds the input's elements, dense and little-endian, in the
// dtype the model expects; a dynamic dim (one per input) is inferred from the
// file's size. The outputs are printed as "output <i> <dtype> [shape]" and
// then one value per line.
#include "thunder/Runtime/Model.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

namespace {

std::vector<char> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

/// The input's shape: static dims as compiled, the one dynamic dim from the
/// file size.
std::vector<int64_t> shapeFor(const thunder::TensorDesc &desc, size_t bytes) {
  std::vector<int64_t> shape = desc.shape;
  int64_t known = static_cast<int64_t>(thunder_dtype_size(desc.dtype));
  int dynamic = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0) {
      if (dynamic >= 0)
        throw std::runtime_error("input '" + desc.name +
                                 "' has several dynamic dims; this example "
                                 "infers only one");
      dynamic = static_cast<int>(d);
    } else {
      known *= shape[d];
    }
  }
  if (dynamic >= 0)
    shape[dynamic] = known ? static_cast<int64_t>(bytes) / known : 0;
  if (dynamic < 0 ? static_cast<int64_t>(bytes) != known
                  : known && static_cast<int64_t>(bytes) % known != 0)
    throw std::runtime_error("the file for input '" + desc.name + "' has " +
                             std::to_string(bytes) +
                             " bytes, which is not a whole tensor of its shape");
  return shape;
}

template <typename T> void printValues(const std::vector<char> &data) {
  const T *values = reinterpret_cast<const T *>(data.data());
  for (size_t i = 0; i < data.size() / sizeof(T); ++i)
    std::cout << +values[i] << "\n";
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " libmodel.so [input.bin ...]\n";
    return 2;
  }
  try {
    thunder::Model model(argv[1]);
    if (argc - 2 != model.numInputs()) {
      std::cerr << "model '" << model.name() << "' takes " << model.numInputs()
                << " inputs, got " << argc - 2 << " files\n";
      return 2;
    }
    std::vector<std::vector<char>> inputData;
    std::vector<thunder::TensorView> inputs;
    for (int i = 0; i < model.numInputs(); ++i) {
      inputData.push_back(readFile(argv[i + 2]));
      thunder::TensorDesc desc = model.input(i);
      inputs.emplace_back(inputData.back().data(), desc.dtype,
                          shapeFor(desc, inputData.back().size()));
    }
    std::vector<std::vector<int64_t>> shapes = model.outputShapes(inputs);
    std::vector<std::vector<char>> outputData;
    std::vector<thunder::TensorView> outputs;
    for (int o = 0; o < model.numOutputs(); ++o) {
      thunder::TensorDesc desc = model.output(o);
      thunder::TensorView view(nullptr, desc.dtype, shapes[o]);
      outputData.emplace_back(view.numBytes());
      view.data = outputData.back().data();
      outputs.push_back(view);
    }
    model.run(inputs, outputs);

    std::cout.precision(9);
    for (int o = 0; o < model.numOutputs(); ++o) {
      std::cout << "output " << o << " " << thunder_dtype_name(outputs[o].dtype)
                << " [";
      for (size_t d = 0; d < shapes[o].size(); ++d)
        std::cout << (d ? ", " : "") << shapes[o][d];
      std::cout << "]\n";
      switch (outputs[o].dtype) {
      case THUNDER_DTYPE_FLOAT32: printValues<float>(outputData[o]); break;
      case THUNDER_DTYPE_FLOAT64: printValues<double>(outputData[o]); break;
      case THUNDER_DTYPE_INT64: printValues<int64_t>(outputData[o]); break;
      case THUNDER_DTYPE_INT32: printValues<int32_t>(outputData[o]); break;
      case THUNDER_DTYPE_BOOL: printValues<bool>(outputData[o]); break;
      default: std::cout << "(values of this dtype are not printed)\n";
      }
    }
  } catch (const std::exception &e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
