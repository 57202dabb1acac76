//===- Divisor.h - S as a multiplier and a shift ----------------*- C++ -*-===//
//
// Part of normfuse. MLIR-free and header-only: the runtime computes a
// chain's `chain_s_divisor` launch parameter with it, and the lowering
// (passes/LowerRows.cpp, KernelLowering::divideByS) emits the matching
// division in register-resident rows (streamed rows divide); runtime
// tests check the two agree.
//
// A kernel's row n of a chain (n < 2^31: the runtime refuses more rows) is
// token n mod S of batch entry n / S. A 32-bit division by a value known
// only at launch is about 25 SASS instructions (a reciprocal through
// MUFU.RCP, its correction, two fix-up steps), once per row, in rows
// short enough to issue close to one instruction per cycle per scheduler.
// With
//   l = ceil(log2 S),  m = floor(2^32 (2^l - S) / S) + 1  (m < 2^32),
// n / S = (umulhi(n, m) + n) >> l for every n < 2^32: 2^32 + m is
// Granlund and Montgomery's multiplier ("Division by invariant integers
// using multiplication", 1994, theorem 4.2 with N = 32), and n < 2^31
// keeps the sum in 32 bits. Three instructions (sm_90: IMAD.WIDE.U32,
// IADD3, SHF.R.U32.HI): RMSNorm's two-row variant of 16 threads (D = 100)
// went from 352 SASS instructions to 333.
//
//===----------------------------------------------------------------------===//

#ifndef NF_RUNTIME_DIVISOR_H
#define NF_RUNTIME_DIVISOR_H

#include <cstdint>

namespace nf::rt {

/// `chain_s_divisor` for S: m in the low 32 bits, l in the high ones. S = 0
/// or S >= 2^31 (a chain without rows, or one the runtime refuses: its
/// kernel divides nothing) gives 0.
inline uint64_t sDivisor(uint64_t s) {
  if (s == 0 || s >= (uint64_t(1) << 31))
    return 0;
  uint64_t l = 0;
  while ((uint64_t(1) << l) < s)
    ++l;
  uint64_t m = (((uint64_t(1) << l) - s) << 32) / s + 1;
  return m | l << 32;
}

/// What the kernel computes from `divisor` for a row n < 2^31: n / S.
inline uint32_t divideBySDivisor(uint32_t n, uint64_t divisor) {
  uint32_t m = (uint32_t)divisor;
  uint32_t l = (uint32_t)(divisor >> 32);
  uint32_t high = (uint32_t)(((uint64_t)n * m) >> 32);
  return (high + n) >> l;
}

} // namespace nf::rt

#endif // NF_RUNTIME_DIVISOR_H
