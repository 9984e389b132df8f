// emu_main.cpp: the host driver of an emulated GPU model: runs the generated library's entry
// table on host memory.
//
//   emu DIR      reads DIR/in_shapes.txt (one input's dims a line; the table's static
//                shapes when absent) and DIR/in0.bin.. (each input's bytes), runs the model
//                and writes DIR/out0.bin.. and DIR/shapes.txt (one output's dims a line); prints the emulated warp width and the number of launches
//                and blocks run.
#include "thunder-c/artifact.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" const thunder_model_v1 *thunder_model_entry_v1(void);
namespace thunder_emu {
void stats(long *launches, long *blocks, int *warp);
}

static size_t dtype_bytes(int dtype) {
  switch (dtype) {
  case THUNDER_DTYPE_BOOL: case THUNDER_DTYPE_INT8: case THUNDER_DTYPE_FLOAT8_E4M3FN:
  case THUNDER_DTYPE_FLOAT8_E5M2: return 1;
  case THUNDER_DTYPE_FLOAT16: case THUNDER_DTYPE_BFLOAT16: return 2;
  case THUNDER_DTYPE_INT32: case THUNDER_DTYPE_FLOAT32: return 4;
  default: return 8;
  }
}

static size_t numel(const int64_t *shape, int rank) {
  size_t n = 1;
  for (int i = 0; i < rank; ++i) n *= size_t(shape[i]);
  return n;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  const thunder_model_v1 *m = thunder_model_entry_v1();
  char error[1024] = "";
  void *state = nullptr;
  if (m->create("", &state, error, sizeof error)) {
    fprintf(stderr, "create: %s\n", error);
    return 1;
  }
  std::vector<std::vector<int64_t>> in_shapes(m->num_inputs);
  std::ifstream shape_file(dir + "/in_shapes.txt");
  for (int i = 0; i < m->num_inputs; ++i) {
    const thunder_tensor_desc &d = m->inputs[i];
    std::string line;
    if (shape_file && std::getline(shape_file, line)) {
      std::istringstream dims(line);
      for (int64_t v; dims >> v;)
        in_shapes[i].push_back(v);
    } else {
      in_shapes[i].assign(d.shape, d.shape + d.rank);
    }
    if (int(in_shapes[i].size()) != d.rank) {
      fprintf(stderr, "input %d: %zu dims given, the model takes %d\n", i, in_shapes[i].size(),
              d.rank);
      return 1;
    }
  }
  std::vector<std::vector<char>> in_data(m->num_inputs);
  std::vector<thunder_tensor> ins(m->num_inputs);
  for (int i = 0; i < m->num_inputs; ++i) {
    const thunder_tensor_desc &d = m->inputs[i];
    size_t bytes = numel(in_shapes[i].data(), d.rank) * dtype_bytes(d.dtype);
    in_data[i].resize(bytes + 1);
    std::string path = dir + "/in" + std::to_string(i) + ".bin";
    FILE *f = fopen(path.c_str(), "rb");
    if (!f || fread(in_data[i].data(), 1, bytes, f) != bytes) {
      fprintf(stderr, "cannot read %zu bytes from %s\n", bytes, path.c_str());
      return 1;
    }
    fclose(f);
    ins[i] = {in_data[i].data(), d.dtype, d.rank, in_shapes[i].data()};
  }
  std::vector<std::vector<int64_t>> shapes(m->num_outputs);
  std::vector<int64_t *> shape_ptrs(m->num_outputs);
  for (int i = 0; i < m->num_outputs; ++i) {
    shapes[i].resize(m->outputs[i].rank + 1);
    shape_ptrs[i] = shapes[i].data();
  }
  if (m->output_shapes(state, ins.data(), shape_ptrs.data(), error, sizeof error)) {
    fprintf(stderr, "output_shapes: %s\n", error);
    return 1;
  }
  std::vector<std::vector<char>> out_data(m->num_outputs);
  std::vector<thunder_tensor> outs(m->num_outputs);
  for (int i = 0; i < m->num_outputs; ++i) {
    const thunder_tensor_desc &d = m->outputs[i];
    out_data[i].assign(numel(shapes[i].data(), d.rank) * dtype_bytes(d.dtype) + 1, 0);
    outs[i] = {out_data[i].data(), d.dtype, d.rank, shapes[i].data()};
  }
  uint64_t ws_bytes = m->workspace_bytes(state, ins.data());
  void *ws = aligned_alloc(256, (ws_bytes + 256) / 256 * 256);
  if (m->run(state, ins.data(), outs.data(), ws, nullptr, error, sizeof error)) {
    fprintf(stderr, "run: %s\n", error);
    return 1;
  }
  FILE *sf = fopen((dir + "/shapes.txt").c_str(), "w");
  for (int i = 0; i < m->num_outputs; ++i) {
    std::string path = dir + "/out" + std::to_string(i) + ".bin";
    FILE *f = fopen(path.c_str(), "wb");
    fwrite(out_data[i].data(), 1, out_data[i].size() - 1, f);
    fclose(f);
    for (int r = 0; r < m->outputs[i].rank; ++r)
      fprintf(sf, "%s%lld", r ? " " : "", (long long)shapes[i][r]);
    fprintf(sf, "\n");
  }
  fclose(sf);
  long launches = 0, blocks = 0;
  int warp = 0;
  thunder_emu::stats(&launches, &blocks, &warp);
  printf("warp %d launches %ld blocks %ld\n", warp, launches, blocks);
  m->destroy(state);
  free(ws);
  return 0;
}
