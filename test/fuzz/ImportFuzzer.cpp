// libFuzzer target for the whole import (docs/import.md): a .pt2 archive's bytes go through
// what `thunder-compile` does up to a verified module (Pt2Archive, examineExportedProgram,
// importPt2Archive, which parses the program JSON, converts every node and runs the verifier),
// and the module is printed. Any input must end as a module or as an error diagnostic: a
// crash, a sanitizer report, or a failed import that reported no error is a bug.
//
// The custom mutator is structure-aware: it unpacks the archive, parses a JSON record (most
// often models/model.json), edits the tree the way a broken or unexpected exporter would (a
// tensor's sizes or dtype, an op's target, a node or argument dropped or repeated, an argument
// of another kind, names renumbered, ints changed), writes the JSON back and zips the archive
// again; some of the time it mutates a record's or the whole archive's bytes instead.
//
// Built by test/fuzz/CMakeLists.txt with clang++-19 -fsanitize=fuzzer,address,undefined; run
// as the ctest fuzz-import over a copy of test/fuzz/import-corpus (docs/developing.md,
// "Fuzzing").
#include "FuzzZip.h"

#include "thunder/Import/Importer.h"
#include "thunder/Import/Pt2Archive.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

using namespace thunder;

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

static mlir::DialectRegistry *registry;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  registry = new mlir::DialectRegistry;
  import::registerImportDialects(*registry);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A non-owning buffer over libFuzzer's exactly-sized copy, so that a read past the end is an
  // ASan report.
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  auto archive = Pt2Archive::fromBuffer(
      llvm::MemoryBuffer::getMemBuffer(bytes, "fuzz.pt2", /*RequiresNullTerminator=*/false),
      "fuzz.pt2");
  if (!archive) {
    llvm::consumeError(archive.takeError());
    return 0;
  }
  // thunder-compile --examine.
  if (auto json = (*archive)->modelJson()) {
    if (auto report = import::examineExportedProgram(*json, "fuzz.pt2")) {
      volatile size_t sink = import::formatExamineReport(*report).size();
      (void)sink;
    } else {
      llvm::consumeError(report.takeError());
    }
  } else {
    llvm::consumeError(json.takeError());
  }

  // thunder-compile's import.
  mlir::MLIRContext context(*registry, mlir::MLIRContext::Threading::DISABLED);
  int errors = 0;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() == mlir::DiagnosticSeverity::Error)
      ++errors;
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      import::importPt2Archive(context, **archive, import::ImportOptions());
  if (!module) {
    if (errors == 0) {
      std::fprintf(stderr, "import fuzzer: the import failed without an error diagnostic\n");
      std::abort();
    }
    return 0;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, mlir::OpPrintingFlags().elideLargeElementsAttrs(16).elideLargeResourceString(64));
  return 0;
}

//===----------------------------------------------------------------------===//
// Structure-aware mutator
//===----------------------------------------------------------------------===//

namespace {

using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

/// Every value in a JSON tree, with the key it sits under (empty in arrays and at the root).
struct Site {
  Value *value;
  std::string key;
  bool inGraph; ///< under graph_module.graph (nodes, their arguments, tensor_values)
};

void collect(Value &value, const std::string &key, bool inGraph, std::vector<Site> &sites,
             std::vector<std::string> &strings, std::vector<std::string> &keys) {
  inGraph = inGraph || key == "graph";
  sites.push_back({&value, key, inGraph});
  if (Object *object = value.getAsObject()) {
    for (auto &member : *object) {
      keys.push_back(member.first.str());
      collect(member.second, member.first.str(), inGraph, sites, strings, keys);
    }
  } else if (Array *array = value.getAsArray()) {
    for (Value &element : *array)
      collect(element, "", inGraph, sites, strings, keys);
  } else if (auto string = value.getAsString()) {
    strings.push_back(string->str());
  }
}

/// Op names to put in a node's target: every op the importer converts, and a few it does not.
const std::vector<std::string> &opTargets() {
  static const std::vector<std::string> targets = [] {
    std::vector<std::string> names;
    for (const std::string &op : import::supportedOps())
      names.push_back("torch.ops." + op);
    for (const auto &entry : import::unsupportedOpReasons())
      names.push_back("torch.ops." + entry.first);
    names.push_back("torch.ops.aten.no_such_op.default");
    names.push_back("torch.ops.mylib.custom.default");
    names.push_back("torch.ops.aten.add");
    names.push_back("");
    names.push_back("<built-in function getitem>");
    names.push_back("_operator.getitem");
    return names;
  }();
  return targets;
}

/// Argument kinds and other keys of the schema (torch/_export/serde/schema.py).
const char *const kKinds[] = {
    "as_none",        "as_tensor",       "as_tensors",       "as_int",           "as_ints",
    "as_float",       "as_floats",       "as_string",        "as_strings",       "as_sym_int",
    "as_sym_ints",    "as_scalar_type",  "as_memory_format", "as_layout",        "as_device",
    "as_bool",        "as_bools",        "as_sym_bool",      "as_sym_float",     "as_optional_tensors",
    "as_custom_obj",  "as_graph",        "as_operator",      "as_expr",          "as_sym_floats",
    "user_input",     "parameter",       "buffer",           "tensor_constant",  "constant_input",
    "user_output",    "buffer_mutation", "loss_output",      "token",            "custom_obj"};

int64_t interestingInt(std::mt19937_64 &rng, int64_t old) {
  static const int64_t values[] = {0,         1,          -1,         2,
                                   3,         4,          7,          8,
                                   16,        64,         127,        128,
                                   255,       256,        1024,       65536,
                                   INT32_MAX, INT32_MIN,  INT64_MAX,  INT64_MIN,
                                   INT64_MAX / 2 + 1,     -2,         int64_t(1) << 40};
  switch (rng() % 4) {
  case 0: // wrapping, as the mutator's own arithmetic must not be undefined
    return static_cast<int64_t>(static_cast<uint64_t>(old) + rng() % 5 - 2);
  case 1:
    return static_cast<int64_t>(0 - static_cast<uint64_t>(old));
  default:
    return values[rng() % std::size(values)];
  }
}

/// One edit of the tree rooted at `root`.
void mutateJson(Value &root, std::mt19937_64 &rng) {
  std::vector<Site> sites;
  std::vector<std::string> strings, keys;
  collect(root, "", false, sites, strings, keys);
  // Mostly in the graph (nodes, their arguments, tensor_values), where most code is.
  Site site = sites[rng() % sites.size()];
  for (int tries = 0; tries < 8 && !site.inGraph && rng() % 4 != 0; ++tries)
    site = sites[rng() % sites.size()];
  Value &value = *site.value;
  // Sometimes, whatever it is: another value of the document in its place.
  if (rng() % 12 == 0) {
    value = Value(*sites[rng() % sites.size()].value);
    return;
  }
  if (auto integer = value.getAsInteger()) {
    value = interestingInt(rng, *integer);
  } else if (value.kind() == Value::Number) {
    static const double doubles[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e308, -1e308, 1e-320,
                                     3.5, 2.0, 1e20};
    value = doubles[rng() % std::size(doubles)];
  } else if (auto string = value.getAsString()) {
    if (site.key == "target" || rng() % 6 == 0)
      value = opTargets()[rng() % opTargets().size()];
    else if (rng() % 4 == 0)
      value = string->str() + "_" + std::to_string(rng() % 4);
    else
      value = strings[rng() % strings.size()];
  } else if (auto boolean = value.getAsBoolean()) {
    value = !*boolean;
  } else if (value.kind() == Value::Null) {
    value = interestingInt(rng, 0);
  } else if (Array *array = value.getAsArray()) {
    size_t n = array->size();
    switch (n == 0 ? 4 : rng() % 5) {
    case 0: { // drop an element (a node, an argument, a dim, an input)
      size_t drop = rng() % n;
      for (size_t i = drop; i + 1 < n; ++i)
        std::swap((*array)[i], (*array)[i + 1]);
      array->pop_back();
      break;
    }
    case 1: { // repeat one
      Value copy = (*array)[rng() % n];
      array->insert(array->begin() + rng() % (n + 1), std::move(copy));
      break;
    }
    case 2: { // swap two (reorders nodes: uses before definitions)
      size_t a = rng() % n, b = rng() % n;
      if (a != b) // json::Value's move assignment is not safe on itself
        std::swap((*array)[a], (*array)[b]);
      break;
    }
    case 3:
      array->clear();
      break;
    case 4: // a value from elsewhere
      array->push_back(Value(*sites[rng() % sites.size()].value));
      break;
    }
  } else if (Object *object = value.getAsObject()) {
    if (object->empty()) {
      (*object)[kKinds[rng() % std::size(kKinds)]] = interestingInt(rng, 0);
      return;
    }
    // The object is rebuilt rather than edited in place (erase, insert): a
    // fresh object per edit keeps the mutator clear of DenseMap tombstones.
    size_t pick = rng() % object->size(), index = 0;
    unsigned edit = rng() % 4;
    std::string other = rng() % 2 ? std::string(kKinds[rng() % std::size(kKinds)])
                                  : keys[rng() % keys.size()];
    Value replacement(*sites[rng() % sites.size()].value);
    Object rebuilt;
    for (auto &member : *object) {
      std::string key = member.first.str();
      Value copy(member.second);
      if (index++ != pick) {
        rebuilt[key] = std::move(copy);
        continue;
      }
      switch (edit) {
      case 0: // drop a member
        break;
      case 1: // the same value under another key: another argument kind, spec kind
        rebuilt[other] = std::move(copy);
        break;
      case 2: // another value from elsewhere
        rebuilt[key] = std::move(replacement);
        break;
      case 3: // a member of another object
        rebuilt[key] = std::move(copy);
        rebuilt[other] = std::move(replacement);
        break;
      }
    }
    value = Value(std::move(rebuilt));
  }
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  std::mt19937_64 rng(seed);
  std::vector<fuzz::ZipEntry> entries;
  if (rng() % 8 == 0 || !fuzz::readZip(data, size, entries) || entries.empty())
    return LLVMFuzzerMutate(data, size, maxSize);
  // Mostly the program; sometimes another JSON record (the weights' and constants' configs)
  // or any record's bytes.
  size_t model = entries.size(), pick;
  std::vector<size_t> jsonRecords;
  for (size_t i = 0; i < entries.size(); ++i) {
    llvm::StringRef name = entries[i].name;
    if (name.ends_with("/models/model.json"))
      model = i;
    if (name.ends_with(".json"))
      jsonRecords.push_back(i);
  }
  unsigned choice = rng() % 10;
  if (choice < 7 && model != entries.size())
    pick = model;
  else if (choice < 9 && !jsonRecords.empty())
    pick = jsonRecords[rng() % jsonRecords.size()];
  else
    pick = rng() % entries.size();
  fuzz::ZipEntry &entry = entries[pick];
  llvm::Expected<Value> json = llvm::json::parse(entry.data);
  if (json && choice < 9) {
    int edits = 1 + rng() % 3;
    for (int i = 0; i < edits; ++i)
      mutateJson(*json, rng);
    entry.data.clear();
    llvm::raw_string_ostream os(entry.data);
    os << *json;
  } else {
    if (!json)
      llvm::consumeError(json.takeError());
    std::string bytes = entry.data;
    bytes.resize(bytes.size() + 64);
    bytes.resize(LLVMFuzzerMutate(reinterpret_cast<uint8_t *>(&bytes[0]), entry.data.size(),
                                  bytes.size()));
    entry.data = std::move(bytes);
  }
  std::string out = fuzz::writeZip(entries);
  if (out.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
