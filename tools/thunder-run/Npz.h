// Reading and writing numpy's .npy and .npz files, and converting Thunder's element types to and
// from double, for thunder-run. Standard library only.
//
// Supported: .npy format versions 1, 2 and 3, little-endian C-order arrays of '<f8', '<f4',
// '<f2', '<i8', '<i4', '|i1', '|b1', and '<u2' / '|u1' as the raw bits of bfloat16 / float8
// (numpy has neither type); .npz archives as np.savez writes them (STORED entries, ZIP64 extras
// included). np.savez_compressed's deflated entries are refused with a message saying so.
#ifndef THUNDER_TOOLS_THUNDER_RUN_NPZ_H
#define THUNDER_TOOLS_THUNDER_RUN_NPZ_H

#include <cstdint>
#include <string>
#include <vector>

namespace thunder::npz {

/// One array: numpy's dtype descriptor ("<f4"), its shape, and its bytes (C order,
/// little-endian).
struct Array {
  std::string descr;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  int64_t numElements() const;
};

/// An array with its name in an .npz (the entry name without ".npy").
struct NamedArray {
  std::string name;
  Array array;
};

/// Bytes per element of a supported descriptor; 0 if unsupported.
size_t descrSize(const std::string &descr);

/// Parses the contents of a .npy file. On failure returns false with a message in `error`.
bool parseNpy(const std::string &bytes, Array &array, std::string &error);

/// The contents of a .npy file (format 1.0; 2.0 if the header needs it) holding `array`.
std::string serializeNpy(const Array &array);

/// Reads every array of an .npz file, in archive order.
bool readNpz(const std::string &path, std::vector<NamedArray> &arrays, std::string &error);

/// Reads every array of the .npz file contents `bytes`; `path` names the file in messages.
bool parseNpz(const std::string &bytes, const std::string &path, std::vector<NamedArray> &arrays,
              std::string &error);

/// Writes `arrays` as an uncompressed .npz that np.load reads.
bool writeNpz(const std::string &path, const std::vector<NamedArray> &arrays,
              std::string &error);

/// The descriptor thunder-run writes for a thunder_dtype: "<f4" for float32, "<u2" for
/// bfloat16's bits, "|u1" for float8's bits; "" for an unknown dtype.
std::string descrForDType(int32_t dtype);

/// The thunder_dtype of an array with descriptor `descr` given to an input of dtype
/// `expected`: the descriptor's own dtype, except that '<u2' is taken as bfloat16 and '|u1'
/// as float8 when the input has that dtype. -1 for a descriptor with no Thunder dtype.
int32_t dtypeForDescr(const std::string &descr, int32_t expected);

/// Element `index` of `data` (of thunder_dtype `dtype`) as a double.
double loadElement(const void *data, int32_t dtype, size_t index);

/// Stores `value` into element `index` of `data`, rounding to nearest even for the small
/// float types and truncating toward zero for integers.
void storeElement(void *data, int32_t dtype, size_t index, double value);

/// CRC-32 (the zip polynomial) of `size` bytes.
uint32_t crc32(const void *data, size_t size);

} // namespace thunder::npz

#endif // THUNDER_TOOLS_THUNDER_RUN_NPZ_H
