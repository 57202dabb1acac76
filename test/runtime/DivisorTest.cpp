//===- DivisorTest.cpp - S as a multiplier and a shift
//---------------------===//
//
// Part of normfuse.
//
// The kernels divide a row by S with the runtime's `chain_s_divisor`
// (runtime/Divisor.h); divideBySDivisor is the lowering's arithmetic in
// C++. Checked against the division for every S up to 2^17, the S around
// every power of two up to 2^31 - 1, and the rows where a wrong quotient
// would show first (either side of each multiple of S, the largest row).
//
//===----------------------------------------------------------------------===//

#include "runtime/Divisor.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

using namespace nf::rt;

namespace {

constexpr uint32_t kMaxRow = 0x7fffffffu; // the runtime's bound: rows < 2^31

/// Rows near multiples of `s`, the extremes and a few random ones.
std::vector<uint32_t> rowsToTry(uint32_t s, std::mt19937 &random) {
  std::vector<uint32_t> rows = {0, 1, kMaxRow, kMaxRow - 1};
  const uint64_t most = kMaxRow / s;
  for (uint64_t k : std::vector<uint64_t>{1, 2, 3, 1000, most / 2, most}) {
    uint64_t multiple = k * s;
    for (int64_t delta = -1; delta <= 1; ++delta) {
      int64_t row = (int64_t)multiple + delta;
      if (row >= 0 && row <= kMaxRow)
        rows.push_back((uint32_t)row);
    }
  }
  std::uniform_int_distribution<uint32_t> any(0, kMaxRow);
  for (int i = 0; i < 4; ++i)
    rows.push_back(any(random));
  return rows;
}

void expectExact(uint32_t s, std::mt19937 &random) {
  uint64_t divisor = sDivisor(s);
  // l <= 31: a multiplier of 2^32 or more would have carried into it.
  EXPECT_LE(divisor >> 32, 31u) << "S " << s;
  for (uint32_t row : rowsToTry(s, random)) {
    ASSERT_EQ(divideBySDivisor(row, divisor), row / s)
        << "row " << row << " S " << s;
  }
}

TEST(DivisorTest, EveryShortS) {
  std::mt19937 random(1);
  for (uint32_t s = 1; s <= (1u << 17); ++s)
    expectExact(s, random);
}

TEST(DivisorTest, AroundPowersOfTwo) {
  std::mt19937 random(2);
  for (int l = 17; l <= 31; ++l)
    for (int64_t delta = -3; delta <= 3; ++delta) {
      int64_t s = (1ll << l) + delta;
      if (s >= 1 && s <= kMaxRow)
        expectExact((uint32_t)s, random);
    }
  std::uniform_int_distribution<uint32_t> any(1, kMaxRow);
  for (int i = 0; i < 20000; ++i)
    expectExact(any(random), random);
}

TEST(DivisorTest, Fields) {
  // S = 1: l = 0, m = 1, so the quotient is the row itself.
  EXPECT_EQ(sDivisor(1), 1u);
  // S = 12: l = 4, m = floor(2^32 * 4 / 12) + 1.
  EXPECT_EQ(sDivisor(12), (4ull << 32) | 1431655766u);
  // No rows, or more than the runtime launches: nothing to divide.
  EXPECT_EQ(sDivisor(0), 0u);
  EXPECT_EQ(sDivisor(1ull << 31), 0u);
  EXPECT_EQ(sDivisor(1ull << 40), 0u);
}

} // namespace
