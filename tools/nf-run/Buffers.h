//===- Buffers.h - nf-run's device buffers and input sets -------*- C++ -*-===//
//
// Part of normfuse. Device buffers with guard bytes and padded rows, the
// host value of one element of any dtype, and the rotating input sets that
// --bench and --tune launch on, sized from --dims.
//
//===----------------------------------------------------------------------===//

#ifndef NF_TOOLS_NFRUN_BUFFERS_H
#define NF_TOOLS_NFRUN_BUFFERS_H

#include "runtime/Runtime.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nfrun {

/// The value of the element of type `dtype` at `p`.
double toDouble(const unsigned char *p, nf::rt::DType dtype);

/// The number of elements of a shape, and of a tensor.
int64_t elementsOf(const nf::rt::Shape &shape);
int64_t countElements(const nf::rt::Tensor &t);

/// A device buffer laid out with guard bytes and optional row padding.
struct Buffer {
  nf::rt::CUdeviceptr alloc = 0;
  size_t allocBytes = 0;
  nf::rt::Tensor tensor;
  std::vector<unsigned char> expected; ///< the whole allocation as staged
};

constexpr size_t kGuard = 256;

/// A buffer for `shape` with kGuard bytes either side, rows padded by `pad`
/// elements, the base one element off with `misalign`; it holds `data`
/// (dense) where given, and 0xFF bytes (NaN in every float type) elsewhere.
Buffer makeBuffer(const nf::rt::CudaDriver *cu, nf::rt::DType dtype,
                  const nf::rt::Shape &shape,
                  const std::vector<unsigned char> *data, int64_t pad,
                  bool misalign);

/// Rotating input sets for timing: enough of them to cycle through more
/// than the L2 cache. With `varied`, set 0 holds varied finite values
/// (tuning compares every candidate's results on it), the others a constant.
struct BenchInputs {
  std::vector<std::vector<nf::rt::Value>> args;
  std::vector<std::vector<nf::rt::Tensor>> results;
  /// Set 0's buffers (args, then results not written in place), as staged.
  std::vector<Buffer> first;
  /// Bytes that must move: every tensor read once, every result written
  /// once (an in-place result is read and written).
  double bytes = 0;
};

/// The input sets of `k` for the symbolic sizes `dims` (--dims), the rows
/// of every tensor of rank 2 or more padded by `pad` elements (--pad).
BenchInputs makeBenchInputs(const nf::rt::CudaDriver *cu,
                            const nf::rt::KernelInfo &k,
                            const std::map<std::string, std::string> &dims,
                            bool varied, int64_t pad = 0);

} // namespace nfrun

#endif // NF_TOOLS_NFRUN_BUFFERS_H
