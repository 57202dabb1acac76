//===- PlanLaunchTest.cpp - launch validation and planning, no GPU --------===//
//
// Part of normfuse. planLaunch() against the compiler's real metadata with
// tensors at fake device addresses: every validation error (the status is
// an error and its message says what was expected and what was found), the
// grid, the choice of variant and the kernel parameters.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"
#include "runtime/Divisor.h"

#include <algorithm>
#include <climits>

using namespace nf::rt;
using namespace nf_rt_test;

namespace {

constexpr DType BF16 = DType::BF16, F16 = DType::F16, F32 = DType::F32,
                I8 = DType::I8, I32 = DType::I32, I64 = DType::I64,
                F8E4M3FN = DType::F8E4M3FN, F8E5M2 = DType::F8E5M2;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Whether the guard of `v` holds for rows of `d` elements whose tensors
/// (strides included) allow vectorized accesses of at most `maxChunk`
/// elements of the narrowest type: what docs/Artifact.md promises, written
/// out independently of planLaunch. A launch whose tensors are all 16-byte
/// aligned allows every chunk (kAnyChunk), one 8-byte aligned in bf16 the
/// 8-byte chunks of 4 elements, one misaligned by an element none (0).
/// A peeled variant's guard holds only where `peeled` says the launch's
/// tensors allow one (peeledServes below). A short launch's persistent twin
/// (max_rows_per_cta > 0) serves only launches planned with the resident
/// CTAs of each function, which these are not (ShortLaunchTwin below).
constexpr int64_t kAnyChunk = INT64_MAX;
bool guardHolds(const VariantInfo &v, int64_t d, int64_t maxChunk,
                bool peeled = false) {
  if (v.maxRowsPerCta > 0)
    return false;
  if (v.vectorized && (v.chunk > maxChunk || d % v.chunk != 0))
    return false;
  if (v.peeled && !peeled)
    return false;
  return v.maxD == 0 || d <= v.maxD;
}

/// Whether `launch` allows a peeled variant of chunks of `chunk` elements
/// (docs/Artifact.md, written out independently of planLaunch): every
/// [B, S, D] tensor starts at the same element offset modulo the chunk and
/// steps by strides equal modulo the chunk (a dimension of size 1 never
/// steps), and every operand broadcast along the rows of 4 bytes or more
/// per element is 16-byte aligned, with strides (of dimensions larger than
/// 1) that keep it so.
bool peeledServes(const KernelInfo &k, const Launch &launch, int64_t chunk) {
  std::vector<const Tensor *> rows;
  for (size_t i = 0; i < k.args.size(); ++i) {
    if (!k.args[i].isTensor || k.args[i].role != "data")
      continue;
    const Tensor &t = launch.args[i].tensor;
    int64_t bytes = dtypeBytes(k.args[i].dtype);
    if (k.args[i].bcast == "BSD") {
      rows.push_back(&t);
    } else if (k.args[i].bcast != "One" && bytes >= 4) {
      if (t.data % 16 != 0)
        return false;
      for (int dim = 0; dim + 1 < t.rank; ++dim)
        if (t.shape[dim] > 1 && t.strides[dim] * bytes % 16 != 0)
          return false;
    }
  }
  for (size_t r = 0; r < k.results.size(); ++r)
    if (k.results[r].shape.size() == 3 && !k.results[r].group)
      rows.push_back(&launch.results[r]);
  if (rows.empty())
    return false;
  auto offset = [&](const Tensor &t) {
    int64_t bytes = dtypeBytes(t.dtype);
    return t.data % bytes != 0 ? -1 : int64_t(t.data / bytes) % chunk;
  };
  for (const Tensor *t : rows) {
    if (offset(*t) < 0 || offset(*t) != offset(*rows[0]))
      return false;
    for (int dim = 0; dim < 2; ++dim)
      for (const Tensor *u : rows)
        if (t->shape[dim] > 1 && u->shape[dim] > 1 &&
            (t->strides[dim] - u->strides[dim]) % chunk != 0)
          return false;
  }
  return true;
}

/// Checks that `plan` launches the first variant of `kernel` whose guard
/// holds, with its block, its vectorized flag, and for `rows` rows per chain
/// ceil(rows / rows_per_cta) CTAs per chain; returns that variant.
const VariantInfo &expectFirstFitUpTo(const KernelInfo &kernel,
                                      const LaunchPlan &plan, int64_t d,
                                      int64_t maxChunk,
                                      const std::vector<int64_t> &rows,
                                      bool peeled = false) {
  const VariantInfo &v = launchedVariant(kernel, plan);
  EXPECT_TRUE(guardHolds(v, d, maxChunk, peeled))
      << v.function << " launched for D = " << d;
  for (int i = 0; i < plan.variant && i < (int)kernel.variants.size(); ++i)
    EXPECT_FALSE(guardHolds(kernel.variants[i], d, maxChunk, peeled))
        << kernel.variants[i].function << " comes before " << v.function
        << " and serves D = " << d;
  EXPECT_EQ(plan.vectorized, v.vectorized) << v.function;
  EXPECT_EQ(plan.block, (unsigned)v.blockSize) << v.function;
  uint64_t grid = 0;
  for (int64_t r : rows)
    grid += ceilDiv(r, v.rowsPerCta) * v.clusterSize;
  EXPECT_EQ(plan.grid, grid) << v.function << " D = " << d;
  EXPECT_EQ(plan.rowLength, d);
  return v;
}

/// `aligned`: every tensor 16-byte aligned (any chunk), or one misaligned by
/// an element (no vectorized variant).
const VariantInfo &expectFirstFit(const KernelInfo &kernel,
                                  const LaunchPlan &plan, int64_t d,
                                  bool aligned,
                                  const std::vector<int64_t> &rows,
                                  bool peeled = false) {
  return expectFirstFitUpTo(kernel, plan, d, aligned ? kAnyChunk : 0, rows,
                            peeled);
}

/// Checks every parameter of `plan` against the operands of `launch` and
/// the sizes each chain should have: rows[c] = B * S, s[c], f[c], D.
void expectParams(const KernelInfo &kernel, const Launch &launch,
                  const LaunchPlan &plan, const std::vector<int64_t> &rows,
                  const std::vector<int64_t> &s, const std::vector<int64_t> &f,
                  int64_t d) {
  ASSERT_EQ(plan.numParams, (int)kernel.params.size());
  for (size_t p = 0; p < kernel.params.size(); ++p) {
    const ParamInfo &param = kernel.params[p];
    const std::string &kind = param.kind;
    int i = param.index;
    uint64_t expected;
    if (kind == "arg_ptr")
      expected = launch.args[i].tensor.data;
    else if (kind == "arg_scalar")
      expected = launch.args[i].scalar;
    else if (kind == "result_ptr")
      expected = launch.results[i].data;
    else if (kind == "chain_rows")
      expected = rows.at(i);
    else if (kind == "chain_s")
      expected = s.at(i);
    else if (kind == "chain_f")
      expected = f.at(i);
    else if (kind == "chain_s_divisor")
      expected = sDivisor(s.at(i));
    else if (kind == "row_length")
      expected = d;
    else if (kind == "arg_stride")
      expected = launch.args[i].tensor.strides[param.dim];
    else if (kind == "result_stride")
      expected = launch.results[i].strides[param.dim];
    else if (kind == "cache_rows")
      expected = launch.args[i].tensor.shape[0];
    else {
      ADD_FAILURE() << "unknown parameter kind " << kind;
      continue;
    }
    EXPECT_EQ(plan.params[p], expected) << "parameter " << param.name;
  }
}

//===----------------------------------------------------------------------===//
// fused_add_gate_norm: x, residual [B, S, D] bf16; gate [B, 1, D] f32;
// weight [D] f32; one [B, S, D] bf16 result.
//===----------------------------------------------------------------------===//

/// Dense operands of fused_add_gate_norm for [b, s, d] rows.
Launch fusedLaunch(FakeMemory &mem, int64_t b, int64_t s, int64_t d) {
  Launch launch;
  launch.args = {tensorValue(mem.tensor(BF16, {b, s, d})),
                 tensorValue(mem.tensor(BF16, {b, s, d})),
                 tensorValue(mem.tensor(F32, {b, 1, d})),
                 tensorValue(mem.tensor(F32, {d}))};
  launch.results = {mem.tensor(BF16, {b, s, d})};
  return launch;
}

class FusedTest : public ::testing::Test {
protected:
  void SetUp() override {
    artifact = loadArtifact("fused");
    ASSERT_EQ(artifact.kernels.size(), 1u);
    ASSERT_GT(kernel().variants.size(), 2u);
    ASSERT_TRUE(std::any_of(kernel().variants.begin(), kernel().variants.end(),
                            [](const VariantInfo &v) { return v.vectorized; }));
  }
  const KernelInfo &kernel() const { return artifact.kernels[0]; }

  /// Dense operands, or rows `rowStride` elements apart.
  Launch make(int64_t b, int64_t s, int64_t d, int64_t rowStride = 0) {
    Launch launch;
    launch.args = {tensorValue(mem.tensor(BF16, {b, s, d}, rowStride)),
                   tensorValue(mem.tensor(BF16, {b, s, d}, rowStride)),
                   tensorValue(mem.tensor(F32, {b, 1, d}, rowStride)),
                   tensorValue(mem.tensor(F32, {d}))};
    launch.results = {mem.tensor(BF16, {b, s, d}, rowStride)};
    return launch;
  }
  Tensor &arg(Launch &launch, int i) { return launch.args[i].tensor; }

  Artifact artifact;
  FakeMemory mem;
};

TEST_F(FusedTest, ValidLaunch) {
  Launch launch = make(2, 5, 1536);
  LaunchPlan plan;
  Status status = launch.plan(kernel(), plan);
  ASSERT_TRUE(status.ok()) << status.message();
  const VariantInfo &v = launchedVariant(kernel(), plan);
  EXPECT_TRUE(v.vectorized);
  EXPECT_TRUE(plan.vectorized);
  EXPECT_EQ(plan.grid, ceilDiv(10, v.rowsPerCta));
  EXPECT_EQ(plan.block, (unsigned)v.blockSize);
  EXPECT_EQ(plan.rowLength, 1536);
  expectFirstFit(kernel(), plan, 1536, true, {10});
  expectParams(kernel(), launch, plan, {10}, {5}, {1}, 1536);
  // A few by name, so that the check above is not vacuous.
  EXPECT_EQ(paramValue(kernel(), plan, "row_length", 0), 1536u);
  EXPECT_EQ(paramValue(kernel(), plan, "chain_rows", 0), 10u);
  EXPECT_EQ(paramValue(kernel(), plan, "arg_ptr", 1), arg(launch, 1).data);
  EXPECT_EQ(paramValue(kernel(), plan, "arg_stride", 0, 0), 5u * 1536);
  EXPECT_EQ(paramValue(kernel(), plan, "arg_stride", 0, 1), 1536u);
  EXPECT_EQ(paramValue(kernel(), plan, "arg_stride", 2, 0), 1536u);
  EXPECT_EQ(paramValue(kernel(), plan, "result_stride", 0, 0), 5u * 1536);
  // Held in registers.
  EXPECT_GT(v.chunksPerThread, 0);
}

TEST_F(FusedTest, GridRoundsUp) {
  for (int64_t rows : {1, 2, 3, 7, 31, 32, 33, 255, 256, 257, 1000}) {
    Launch launch = make(1, rows, 64);
    LaunchPlan plan;
    ASSERT_TRUE(launch.plan(kernel(), plan).ok());
    const VariantInfo &v = launchedVariant(kernel(), plan);
    ASSERT_GT(v.rowsPerCta, 1) << "the test needs a multi-row variant";
    EXPECT_EQ(plan.grid, ceilDiv(rows, v.rowsPerCta)) << rows;
    EXPECT_EQ(paramValue(kernel(), plan, "chain_rows", 0), (uint64_t)rows);
    expectFirstFit(kernel(), plan, 64, true, {rows});
  }
}

TEST_F(FusedTest, EmptyLaunch) {
  // No rows: nothing to launch, and empty tensors may be null.
  Launch launch = make(0, 5, 1536);
  LaunchPlan plan;
  Status status = launch.plan(kernel(), plan);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(plan.grid, 0u);
  for (int i : {0, 1, 2})
    arg(launch, i).data = 0;
  launch.results[0].data = 0;
  status = launch.plan(kernel(), plan);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(plan.grid, 0u);
  launch = make(2, 0, 64);
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_EQ(plan.grid, 0u);
  // Padded rows: an empty tensor covers no bytes whatever its strides.
  launch = make(0, 5, 64, 72);
  status = launch.plan(kernel(), plan);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(plan.grid, 0u);
  // Nor does it overlap a result that spans its address.
  launch = make(0, 5, 64);
  launch.results[0] = mem.tensor(BF16, {2, 5, 64});
  arg(launch, 0).data = launch.results[0].data + 64;
  launch.results[0].shape[0] = 0;
  arg(launch, 0).shape[0] = 0;
  status = launch.plan(kernel(), plan);
  ASSERT_TRUE(status.ok()) << status.message();
}

TEST_F(FusedTest, WrongArgumentCount) {
  Launch launch = make(2, 5, 64);
  launch.args.pop_back();
  EXPECT_ERROR(launch.plan(kernel()), "kernel 'fused_add_gate_norm'",
               "expected 4 arguments, found 3");
  launch = make(2, 5, 64);
  launch.args.push_back(scalarValue(1));
  EXPECT_ERROR(launch.plan(kernel()), "expected 4 arguments, found 5");
}

TEST_F(FusedTest, WrongResultCount) {
  Launch launch = make(2, 5, 64);
  launch.results.clear();
  EXPECT_ERROR(launch.plan(kernel()), "expected 1 results, found 0");
  launch = make(2, 5, 64);
  launch.results.push_back(mem.tensor(BF16, {2, 5, 64}));
  EXPECT_ERROR(launch.plan(kernel()), "expected 1 results, found 2");
}

TEST_F(FusedTest, ScalarForTensor) {
  Launch launch = make(2, 5, 64);
  launch.args[2] = scalarValue(7);
  EXPECT_ERROR(launch.plan(kernel()), "argument 'gate' must be a tensor");
}

TEST_F(FusedTest, WrongDType) {
  Launch launch = make(2, 5, 64);
  arg(launch, 0).dtype = F16;
  EXPECT_ERROR(launch.plan(kernel()), "argument 'x' must be bf16, found f16");
  launch = make(2, 5, 64);
  arg(launch, 3).dtype = BF16;
  EXPECT_ERROR(launch.plan(kernel()),
               "argument 'weight' must be f32, found bf16");
  launch = make(2, 5, 64);
  launch.results[0].dtype = F32;
  EXPECT_ERROR(launch.plan(kernel()), "result 0 must be bf16, found f32");
}

TEST_F(FusedTest, WrongRank) {
  Launch launch = make(2, 5, 64);
  arg(launch, 2) = mem.tensor(F32, {2, 64});
  EXPECT_ERROR(launch.plan(kernel()),
               "argument 'gate' must have rank 3, found rank 2");
  launch = make(2, 5, 64);
  launch.results[0] = mem.tensor(BF16, {10, 64});
  EXPECT_ERROR(launch.plan(kernel()),
               "result 0 must have rank 3, found rank 2");
  launch = make(2, 5, 64);
  arg(launch, 0).rank = 5; // more than a Tensor holds
  EXPECT_ERROR(launch.plan(kernel()),
               "argument 'x' must have rank 3, found rank 5");
  arg(launch, 0).rank = -1;
  EXPECT_ERROR(launch.plan(kernel()), "found rank -1");
}

TEST_F(FusedTest, StaticDimensionMismatch) {
  // gate is [B, 1, D]: its middle size is static.
  Launch launch = make(2, 5, 64);
  arg(launch, 2) = mem.tensor(F32, {2, 3, 64});
  EXPECT_ERROR(launch.plan(kernel()),
               "argument 'gate' dimension 1 must be 1, found 3");
  launch = make(2, 5, 64);
  arg(launch, 0).shape[0] = -1;
  EXPECT_ERROR(launch.plan(kernel()),
               "argument 'x' dimension 0 must be non-negative, found -1");
}

TEST_F(FusedTest, MiddleDimensionOfB1D) {
  // With the middle size left dynamic in the metadata, the broadcast kind
  // still requires 1.
  KernelInfo k = kernel();
  ASSERT_EQ(k.args[2].bcast, "B1D");
  k.args[2].shape[1] = -1;
  Launch launch = make(2, 5, 64);
  arg(launch, 2) = mem.tensor(F32, {2, 3, 64});
  EXPECT_ERROR(launch.plan(k), "argument 'gate' [2, 3, 64]",
               "must have size 1, found 3");
  launch = make(2, 5, 64);
  EXPECT_TRUE(launch.plan(k).ok());
}

TEST_F(FusedTest, NonContiguousLastDimension) {
  Launch launch = make(2, 5, 64);
  arg(launch, 1).strides[2] = 2;
  EXPECT_ERROR(launch.plan(kernel()), "argument 'residual'",
               "the last dimension must be contiguous (stride 1)",
               "found stride 2");
  launch = make(2, 5, 64);
  arg(launch, 3).strides[0] = 0;
  EXPECT_ERROR(launch.plan(kernel()), "argument 'weight'", "found stride 0");
  launch = make(2, 5, 64);
  launch.results[0].strides[2] = 4;
  EXPECT_ERROR(launch.plan(kernel()), "result 0",
               "the last dimension must be contiguous", "found stride 4");
}

TEST_F(FusedTest, NullPointer) {
  Launch launch = make(2, 5, 64);
  arg(launch, 1).data = 0;
  EXPECT_ERROR(launch.plan(kernel()), "argument 'residual' is a null pointer");
  launch = make(2, 5, 64);
  launch.results[0].data = 0;
  EXPECT_ERROR(launch.plan(kernel()), "result 0 is a null pointer");
}

TEST_F(FusedTest, InconsistentD) {
  Launch launch = make(2, 5, 1536);
  arg(launch, 3) = mem.tensor(F32, {1024});
  EXPECT_ERROR(launch.plan(kernel()), "argument 'weight' [1024]",
               "gives D = 1024, expected 1536");
  launch = make(2, 5, 1536);
  launch.results[0] = mem.tensor(BF16, {2, 5, 1024});
  EXPECT_ERROR(launch.plan(kernel()), "result 0 [2, 5, 1024]",
               "gives D = 1024, expected 1536");
}

TEST_F(FusedTest, InconsistentBAndS) {
  Launch launch = make(2, 5, 64);
  arg(launch, 1) = mem.tensor(BF16, {3, 5, 64});
  EXPECT_ERROR(launch.plan(kernel()), "argument 'residual' [3, 5, 64]",
               "gives B = 3, expected 2");
  launch = make(2, 5, 64);
  arg(launch, 2) = mem.tensor(F32, {1, 1, 64});
  EXPECT_ERROR(launch.plan(kernel()), "argument 'gate' [1, 1, 64]",
               "gives B = 1, expected 2");
  launch = make(2, 5, 64);
  launch.results[0] = mem.tensor(BF16, {2, 4, 64});
  EXPECT_ERROR(launch.plan(kernel()), "result 0 [2, 4, 64]",
               "gives S = 4, expected 5");
}

TEST_F(FusedTest, RowLengthZero) {
  Launch launch = make(2, 5, 0);
  EXPECT_ERROR(launch.plan(kernel()), "row length D must be at least 1",
               "found 0");
}

TEST_F(FusedTest, ResultOverlapsAnInput) {
  Launch launch = make(2, 5, 64);
  launch.results[0].data = arg(launch, 0).data + 64;
  EXPECT_ERROR(launch.plan(kernel()), "result 0 overlaps argument 'x'");
  launch = make(2, 5, 64);
  // The result's first element is weight's last two bytes.
  launch.results[0].data = arg(launch, 3).data + 64 * 4 - 2;
  EXPECT_ERROR(launch.plan(kernel()), "result 0 overlaps argument 'weight'");
  // Ending right where x begins (x is the lowest address): adjacent, not
  // overlapping.
  launch = make(2, 5, 64);
  launch.results[0].data = arg(launch, 0).data - 2 * 5 * 64 * 2;
  Status status = launch.plan(kernel());
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST_F(FusedTest, OverlapWithNegativeStrides) {
  // x walks its batches backwards from its base pointer: the bytes it
  // covers lie below it.
  Launch launch = make(2, 5, 64);
  Tensor &x = arg(launch, 0);
  x.strides[0] = -5 * 64;
  launch.results[0].data = x.data - 5 * 64 * 2;
  EXPECT_ERROR(launch.plan(kernel()), "result 0 overlaps argument 'x'");
  // Overlapping only the first element of x's lower batch.
  launch.results[0].data = x.data - 5 * 64 * 2 - 2 * 5 * 64 * 2 + 2;
  EXPECT_ERROR(launch.plan(kernel()), "result 0 overlaps argument 'x'");
  // Ending where x's lowest batch begins.
  launch.results[0].data = x.data - 5 * 64 * 2 - 2 * 5 * 64 * 2;
  Status status = launch.plan(kernel());
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST_F(FusedTest, VectorizedWhenAligned) {
  for (int64_t d : {8, 64, 1536, 3072, 20000}) {
    Launch launch = make(3, 7, d);
    LaunchPlan plan;
    ASSERT_TRUE(launch.plan(kernel(), plan).ok()) << d;
    EXPECT_TRUE(plan.vectorized) << d;
    expectFirstFit(kernel(), plan, d, true, {21});
  }
  // Rows padded to a 16-byte multiple keep it vectorized.
  Launch launch = make(3, 7, 1536, 1544);
  LaunchPlan plan;
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_TRUE(plan.vectorized);
  expectFirstFit(kernel(), plan, 1536, true, {21});
  EXPECT_EQ(paramValue(kernel(), plan, "arg_stride", 0, 1), 1544u);
  EXPECT_EQ(paramValue(kernel(), plan, "arg_stride", 0, 0), 7u * 1544);
  expectParams(kernel(), launch, plan, {21}, {7}, {1}, 1536);
}

TEST_F(FusedTest, GeneralWhenMisaligned) {
  // Each operand in turn two bytes (or one f32) off 16-byte alignment.
  for (int i = 0; i < 4; ++i) {
    Launch launch = make(3, 7, 1536);
    arg(launch, i).data += dtypeBytes(kernel().args[i].dtype);
    LaunchPlan plan;
    Status status = launch.plan(kernel(), plan);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_FALSE(plan.vectorized) << kernel().args[i].name;
    EXPECT_EQ(paramValue(kernel(), plan, "arg_ptr", i), arg(launch, i).data);
    EXPECT_FALSE(peeledServes(kernel(), launch, 8));
    expectFirstFit(kernel(), plan, 1536, false, {21});
  }
  Launch launch = make(3, 7, 1536);
  launch.results[0].data += 2;
  LaunchPlan plan;
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_FALSE(plan.vectorized);
  expectFirstFit(kernel(), plan, 1536, false, {21});
  // Every row tensor one element in, the gate and weight aligned: rows of
  // one offset, a peeled variant.
  launch = make(3, 7, 1536);
  for (int i : {0, 1})
    arg(launch, i).data += 2;
  launch.results[0].data += 2;
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  ASSERT_TRUE(peeledServes(kernel(), launch, 8));
  EXPECT_TRUE(expectFirstFit(kernel(), plan, 1536, false, {21}, true).peeled);
}

TEST_F(FusedTest, GeneralWhenRowsArePadded) {
  // 1537 bf16 elements: rows 3074 bytes apart, 2-byte aligned only (and
  // the gate's batches 6148 bytes apart: no peeled variant).
  Launch launch = make(3, 7, 1536, 1537);
  LaunchPlan plan;
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_FALSE(plan.vectorized);
  EXPECT_FALSE(peeledServes(kernel(), launch, 8));
  EXPECT_EQ(paramValue(kernel(), plan, "arg_stride", 1, 1), 1537u);
  expectParams(kernel(), launch, plan, {21}, {7}, {1}, 1536);
  expectFirstFit(kernel(), plan, 1536, false, {21});
  // 1538: rows 3076 bytes apart, 4-byte aligned: the 4-byte variant.
  launch = make(3, 7, 1536, 1538);
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_TRUE(plan.vectorized);
  EXPECT_EQ(expectFirstFitUpTo(kernel(), plan, 1536, 2, {21}).chunk, 2);
  expectParams(kernel(), launch, plan, {21}, {7}, {1}, 1536);
  // 1540: rows 3080 bytes apart, 8-byte aligned: the 8-byte variant.
  launch = make(3, 7, 1536, 1540);
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_TRUE(plan.vectorized);
  const VariantInfo &v = expectFirstFitUpTo(kernel(), plan, 1536, 4, {21});
  EXPECT_EQ(v.chunk, 4);
  expectParams(kernel(), launch, plan, {21}, {7}, {1}, 1536);
}

TEST_F(FusedTest, HalfChunksWhenDIsAMultipleOfFour) {
  // Every stride and pointer 16-byte aligned, D % 8 == 4: the 8-byte twin
  // of the variant that serves D.
  Launch launch = make(3, 7, 1532, 1536);
  LaunchPlan plan;
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_TRUE(plan.vectorized);
  EXPECT_EQ(plan.rowLength, 1532);
  const VariantInfo &v =
      expectFirstFitUpTo(kernel(), plan, 1532, kAnyChunk, {21});
  EXPECT_EQ(v.chunk, 4);
  EXPECT_GE(v.maxD, 1532);
  // Dense rows of 1540 elements (3080 bytes apart: 8-byte aligned) too.
  launch = make(3, 7, 1540);
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_TRUE(plan.vectorized);
  EXPECT_EQ(expectFirstFitUpTo(kernel(), plan, 1540, 4, {21}).chunk, 4);
  // 8-byte aligned rows but D % 8 == 0 do not make 16-byte accesses legal.
  launch = make(3, 7, 1536, 1540);
  launch.args[0].tensor.data += 8;
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_EQ(expectFirstFitUpTo(kernel(), plan, 1536, 4, {21}).chunk, 4);
}

TEST_F(FusedTest, QuarterChunksWhenDIsEven) {
  // Every stride and pointer aligned, D % 4 == 2: the 4-byte twin (chunks
  // of 2 elements) of the variant that serves D.
  Launch launch = make(3, 7, 1530, 1536);
  LaunchPlan plan;
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_TRUE(plan.vectorized);
  EXPECT_EQ(plan.rowLength, 1530);
  const VariantInfo &v =
      expectFirstFitUpTo(kernel(), plan, 1530, kAnyChunk, {21});
  EXPECT_EQ(v.chunk, 2);
  EXPECT_GE(v.maxD, 1530);
  // Dense rows of 1542 elements (3084 bytes apart: 4-byte aligned).
  launch = make(3, 7, 1542);
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_EQ(expectFirstFitUpTo(kernel(), plan, 1542, 2, {21}).chunk, 2);
}

TEST_F(FusedTest, PeeledOrGeneralWhenDIsOdd) {
  // Every stride and pointer aligned, but D is odd: a peeled variant.
  Launch launch = make(3, 7, 1531, 1536);
  LaunchPlan plan;
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_FALSE(plan.vectorized);
  EXPECT_EQ(plan.rowLength, 1531);
  ASSERT_TRUE(peeledServes(kernel(), launch, 8));
  EXPECT_TRUE(expectFirstFit(kernel(), plan, 1531, true, {21}, true).peeled);
  // Dense rows of 1543: the gate's batches 6172 bytes apart, not a
  // multiple of 16, so the general variant.
  launch = make(3, 7, 1543);
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_FALSE(plan.vectorized);
  ASSERT_FALSE(peeledServes(kernel(), launch, 8));
  EXPECT_FALSE(expectFirstFit(kernel(), plan, 1543, false, {21}).peeled);
  // Short rows (9, dense: the same for the gate): a general variant that
  // holds them in registers.
  launch = make(3, 7, 9);
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_FALSE(plan.vectorized);
  ASSERT_FALSE(peeledServes(kernel(), launch, 8));
  const VariantInfo &g = expectFirstFit(kernel(), plan, 9, false, {21});
  EXPECT_GT(g.chunksPerThread, 0);
  EXPECT_GE(g.maxD, 9);
  // One batch of dense rows of 1001: the gate's batch stride never steps,
  // peeled.
  launch = make(1, 7, 1001);
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  ASSERT_TRUE(peeledServes(kernel(), launch, 8));
  EXPECT_TRUE(expectFirstFit(kernel(), plan, 1001, false, {7}, true).peeled);
}

TEST_F(FusedTest, PeeledOrGeneralWithoutVectorizedVariants) {
  // Aligned rows, the vectorized variants dropped: the first peeled or
  // general variant that holds the row.
  KernelInfo k = kernel();
  k.variants.erase(
      std::remove_if(k.variants.begin(), k.variants.end(),
                     [](const VariantInfo &v) { return v.vectorized; }),
      k.variants.end());
  ASSERT_FALSE(k.variants.empty());
  for (int64_t d : {64, 1536, 20000}) {
    Launch launch = make(3, 7, d);
    LaunchPlan plan;
    ASSERT_TRUE(launch.plan(k, plan).ok()) << d;
    EXPECT_FALSE(plan.vectorized);
    expectFirstFit(k, plan, d, true, {21}, peeledServes(k, launch, 8));
  }
}

TEST_F(FusedTest, OnlyVectorizedVariants) {
  // Hand-edited metadata without general variants: an aligned launch goes
  // through, a misaligned one has no variant and says so.
  KernelInfo k = kernel();
  k.variants.erase(
      std::remove_if(k.variants.begin(), k.variants.end(),
                     [](const VariantInfo &v) { return !v.vectorized; }),
      k.variants.end());
  Launch launch = make(3, 7, 1536);
  LaunchPlan plan;
  ASSERT_TRUE(launch.plan(k, plan).ok());
  expectFirstFit(k, plan, 1536, true, {21});
  arg(launch, 0).data += 2;
  EXPECT_ERROR(launch.plan(k, plan), "kernel 'fused_add_gate_norm'",
               "no variant serves rows of D = 1536");
}

TEST_F(FusedTest, TheFirstVariantWhoseGuardHoldsWins) {
  // Not the best one: the order of the artifact decides. The unbounded
  // general variant moved to the front takes every launch.
  KernelInfo k = kernel();
  ASSERT_FALSE(k.variants.back().vectorized);
  ASSERT_EQ(k.variants.back().maxD, 0);
  std::rotate(k.variants.begin(), k.variants.end() - 1, k.variants.end());
  for (int64_t d : {8, 64, 1536, 20000}) {
    Launch launch = make(3, 7, d);
    LaunchPlan plan;
    ASSERT_TRUE(launch.plan(k, plan).ok()) << d;
    EXPECT_EQ(plan.variant, 0) << d;
    EXPECT_FALSE(plan.vectorized) << d;
    expectFirstFit(k, plan, d, true, {21});
  }
  // A bounded vectorized variant first serves only the rows it holds.
  k = kernel();
  auto fits = std::find_if(
      k.variants.begin(), k.variants.end(),
      [](const VariantInfo &v) { return v.vectorized && v.maxD >= 1024; });
  ASSERT_NE(fits, k.variants.end());
  std::rotate(k.variants.begin(), fits, fits + 1);
  int64_t most = k.variants[0].maxD;
  Launch launch = make(3, 7, 64);
  LaunchPlan plan;
  ASSERT_TRUE(launch.plan(k, plan).ok());
  EXPECT_EQ(plan.variant, 0);
  launch = make(3, 7, most);
  ASSERT_TRUE(launch.plan(k, plan).ok());
  EXPECT_EQ(plan.variant, 0);
  launch = make(3, 7, most + 8);
  ASSERT_TRUE(launch.plan(k, plan).ok());
  EXPECT_NE(plan.variant, 0);
  expectFirstFit(k, plan, most + 8, true, {21});
}

TEST_F(FusedTest, AnyVariantWhoseGuardHoldsCanBeAskedFor) {
  // What nf-run --tune and a tune file ask for: every variant whose guard
  // holds is planned as asked, with its own block and grid; the others are
  // refused with the reason.
  for (int64_t d : {64, 1536, 4096}) {
    for (bool aligned : {true, false}) {
      SCOPED_TRACE(std::to_string(d) + (aligned ? " aligned" : " misaligned"));
      Launch launch = make(3, 7, d);
      if (!aligned)
        arg(launch, 0).data += 2;
      int served = 0;
      for (size_t v = 0; v < kernel().variants.size(); ++v) {
        const VariantInfo &variant = kernel().variants[v];
        LaunchPlan plan;
        Status status = launch.planVariant(kernel(), (int)v, plan);
        if (!guardHolds(variant, d, aligned ? kAnyChunk : 0,
                        peeledServes(kernel(), launch, 8))) {
          EXPECT_FALSE(status.ok()) << variant.function;
          EXPECT_NE(status.message().find("'" + variant.function +
                                          "' does not serve this call"),
                    std::string::npos)
              << status.message();
          continue;
        }
        ASSERT_TRUE(status.ok())
            << variant.function << ": " << status.message();
        ++served;
        EXPECT_EQ(plan.variant, (int)v);
        EXPECT_EQ(plan.block, (unsigned)variant.blockSize);
        EXPECT_EQ(plan.vectorized, variant.vectorized);
        EXPECT_EQ(plan.grid, (uint64_t)ceilDiv(21, variant.rowsPerCta) *
                                 variant.clusterSize);
        expectParams(kernel(), launch, plan, {21}, {7}, {1}, d);
      }
      // The default and at least one more (a longer variant, the general).
      EXPECT_GE(served, 2);
    }
  }
  Launch launch = make(3, 7, 64);
  LaunchPlan plan;
  Status status =
      launch.planVariant(kernel(), (int)kernel().variants.size(), plan);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("no variant"), std::string::npos)
      << status.message();
}

TEST_F(FusedTest, TunedVariantAtItsRowLengthWhereItsGuardHolds) {
  // A tune file's entries (TuningTable): at D = 1536 a longer vectorized
  // variant than the default, at D = 64 the unbounded general one.
  Launch launch = make(3, 7, 1536);
  LaunchPlan untuned;
  ASSERT_TRUE(launch.plan(kernel(), untuned).ok());
  int longer = -1, general = -1;
  for (size_t v = 0; v < kernel().variants.size(); ++v) {
    const VariantInfo &variant = kernel().variants[v];
    if (longer < 0 && (int)v > untuned.variant && variant.vectorized &&
        variant.maxD > 1536 && 1536 % variant.chunk == 0)
      longer = (int)v;
    if (!variant.vectorized && variant.maxD == 0)
      general = (int)v;
  }
  ASSERT_GE(longer, 0);
  ASSERT_GE(general, 0);
  TunedVariants tuned = {{64, general}, {1536, longer}};
  auto plan = [&](const Launch &l, LaunchPlan &out) {
    return planLaunch(kernel(), l.args.data(), l.args.size(), l.results.data(),
                      l.results.size(), out, -1, &tuned);
  };
  LaunchPlan p;
  ASSERT_TRUE(plan(launch, p).ok());
  EXPECT_EQ(p.variant, longer);
  EXPECT_EQ(p.block, (unsigned)kernel().variants[longer].blockSize);
  expectParams(kernel(), launch, p, {21}, {7}, {1}, 1536);
  Launch small = make(3, 7, 64);
  ASSERT_TRUE(plan(small, p).ok());
  EXPECT_EQ(p.variant, general);
  EXPECT_FALSE(p.vectorized);
  // Another D: the default.
  Launch other = make(3, 7, 1024);
  LaunchPlan expected;
  ASSERT_TRUE(other.plan(kernel(), expected).ok());
  ASSERT_TRUE(plan(other, p).ok());
  EXPECT_EQ(p.variant, expected.variant);
  // Misaligned rows at the tuned D: the vectorized tuned variant's guard
  // does not hold, so the default (general) one launches, without error.
  Launch misaligned = make(3, 7, 1536);
  arg(misaligned, 0).data += 2;
  ASSERT_TRUE(misaligned.plan(kernel(), expected).ok());
  ASSERT_TRUE(plan(misaligned, p).ok());
  EXPECT_EQ(p.variant, expected.variant);
  EXPECT_FALSE(p.vectorized);
  // An explicit variant overrides the table.
  ASSERT_TRUE(planLaunch(kernel(), launch.args.data(), launch.args.size(),
                         launch.results.data(), launch.results.size(), p,
                         untuned.variant, &tuned)
                  .ok());
  EXPECT_EQ(p.variant, untuned.variant);
}

//===----------------------------------------------------------------------===//
// The family of a dynamic D: which variant serves which rows
//===----------------------------------------------------------------------===//

TEST_F(FusedTest, ShortLaunchTwin) {
  // D = 3072: a schedule of 128 threads, whose vectorized variant has a
  // persistent twin before it for launches of at most max_rows_per_cta rows
  // per CTA of the twin resident at once (docs/Artifact.md). 3 x 7 rows.
  Launch launch = make(3, 7, 3072);
  LaunchPlan alone;
  ASSERT_TRUE(launch.plan(kernel(), alone).ok());
  const VariantInfo &cta = kernel().variants[alone.variant];
  EXPECT_EQ(cta.schedule, "cta");
  ASSERT_GT(alone.variant, 0);
  int twin = alone.variant - 1;
  const VariantInfo &t = kernel().variants[twin];
  EXPECT_EQ(t.schedule, "persistent");
  // 16, not 8: this kernel (seed #2) reads x only after its reduction.
  EXPECT_EQ(t.maxRowsPerCta, 16);
  EXPECT_EQ(t.maxD, cta.maxD);
  EXPECT_EQ(t.threadsPerRow, cta.threadsPerRow);
  EXPECT_EQ(t.chunksPerThread, cta.chunksPerThread);
  auto plan = [&](const Launch &l, int64_t resident, LaunchPlan &out,
                  int variant = -1) {
    std::vector<int64_t> counts(kernel().variants.size(), resident);
    return planLaunch(kernel(), l.args.data(), l.args.size(), l.results.data(),
                      l.results.size(), out, variant, nullptr, counts.data());
  };
  // 3 resident CTAs: 7 rows each, the twin, walking each entry's rows.
  LaunchPlan p;
  ASSERT_TRUE(plan(launch, 3, p).ok());
  EXPECT_EQ(p.variant, twin);
  EXPECT_TRUE(p.vectorized);
  EXPECT_EQ(p.batches, 3);
  EXPECT_EQ(p.rowsPerBatch, 7);
  EXPECT_EQ(p.ctasPerBatch, 7);
  EXPECT_EQ(p.block, (unsigned)t.blockSize);
  expectParams(kernel(), launch, p, {21}, {7}, {1}, 3072);
  // 2: 11 rows each, still the twin; 1: 21 rows, more than 16, so one row
  // per CTA; none resident, or no counts at all, the same.
  ASSERT_TRUE(plan(launch, 2, p).ok());
  EXPECT_EQ(p.variant, twin);
  for (int64_t resident : {1, 0}) {
    ASSERT_TRUE(plan(launch, resident, p).ok());
    EXPECT_EQ(p.variant, alone.variant) << resident;
    EXPECT_EQ(p.batches, 0) << resident;
  }
  // Asked for by index, the twin serves only where its guard holds.
  EXPECT_TRUE(plan(launch, 3, p, twin).ok());
  Status refused = plan(launch, 1, p, twin);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("does not serve this call"),
            std::string::npos)
      << refused.message();
  // Its other guards still hold: misaligned rows take the general variant.
  Launch misaligned = make(3, 7, 3072);
  arg(misaligned, 0).data += 2;
  ASSERT_TRUE(plan(misaligned, 3, p).ok());
  EXPECT_FALSE(p.vectorized);
  EXPECT_EQ(p.batches, 0);
}

TEST_F(FusedTest, SmallestVectorizedVariantThatHoldsTheRow) {
  for (int64_t d : {64, 256, 1000, 3072, 4096, 16384}) {
    SCOPED_TRACE(d);
    Launch launch = make(3, 7, d);
    LaunchPlan plan;
    Status status = launch.plan(kernel(), plan);
    ASSERT_TRUE(status.ok()) << status.message();
    const VariantInfo &v = expectFirstFit(kernel(), plan, d, true, {21});
    EXPECT_TRUE(v.vectorized) << v.function;
    EXPECT_TRUE(plan.vectorized);
    // Bounded, and the row fits.
    EXPECT_GT(v.maxD, 0) << v.function;
    EXPECT_GE(v.maxD, d) << v.function;
    EXPECT_EQ(d % v.chunk, 0);
    // The one before it in order is too small (if it is a bounded
    // vectorized variant), and so is every vectorized one of a lower bound.
    ASSERT_GE(plan.variant, 0);
    if (plan.variant > 0) {
      const VariantInfo &prev = kernel().variants[plan.variant - 1];
      if (prev.vectorized && prev.maxD > 0 && prev.maxRowsPerCta == 0) {
        EXPECT_LT(prev.maxD, d) << prev.function;
      }
    }
    for (const VariantInfo &w : kernel().variants) {
      if (w.vectorized && w.maxD > 0 && w.maxD < v.maxD) {
        EXPECT_LT(w.maxD, d) << w.function << " holds D = " << d
                             << " in fewer than " << v.function;
      }
    }
    EXPECT_EQ(plan.grid, ceilDiv(21, v.rowsPerCta) * v.clusterSize);
    EXPECT_EQ(plan.block, (unsigned)v.blockSize);
    expectParams(kernel(), launch, plan, {21}, {7}, {1}, d);
  }
}

TEST_F(FusedTest, LongRowsShareACluster) {
  // Past one CTA's registers (bf16: 20480, 512 threads x 5 chunks),
  // clusters of 2, 4 and 8 CTAs of 512 threads share the row; the launch
  // has cluster_size CTAs per row.
  for (auto [d, cluster] : {std::pair<int64_t, int>{20488, 2},
                            {32768, 2},
                            {32776, 4},
                            {65536, 4},
                            {131072, 8}}) {
    SCOPED_TRACE(d);
    Launch launch = make(3, 7, d);
    LaunchPlan plan;
    ASSERT_TRUE(launch.plan(kernel(), plan).ok());
    const VariantInfo &v = expectFirstFit(kernel(), plan, d, true, {21});
    EXPECT_EQ(v.schedule, "cluster");
    EXPECT_EQ(v.clusterSize, cluster);
    EXPECT_EQ(v.rowsPerCta, 1);
    EXPECT_EQ(plan.grid, 21u * cluster);
    EXPECT_EQ(plan.block, 512u);
    // Misaligned: the general variant, one CTA per row.
    arg(launch, 0).data += 2;
    ASSERT_TRUE(launch.plan(kernel(), plan).ok());
    const VariantInfo &g = expectFirstFit(kernel(), plan, d, false, {21});
    EXPECT_EQ(g.clusterSize, 1);
    EXPECT_EQ(plan.grid, 21u);
  }
}

TEST_F(FusedTest, LongRowsStream) {
  // Longer than any register-resident variant holds (8 CTAs of a cluster):
  // the unbounded streaming one.
  int64_t longest = 0;
  for (const VariantInfo &v : kernel().variants)
    longest = std::max(longest, v.maxD);
  ASSERT_EQ(longest, 131072);
  for (int64_t d : {longest + 8, int64_t(140000), int64_t(262144)}) {
    SCOPED_TRACE(d);
    Launch launch = make(2, 5, d);
    LaunchPlan plan;
    ASSERT_TRUE(launch.plan(kernel(), plan).ok());
    const VariantInfo &v = expectFirstFit(kernel(), plan, d, true, {10});
    EXPECT_TRUE(v.vectorized);
    EXPECT_EQ(v.maxD, 0);
    EXPECT_EQ(v.schedule, "streaming");
    EXPECT_EQ(v.chunksPerThread, 0);
    EXPECT_EQ(plan.grid, ceilDiv(10, v.rowsPerCta));
    EXPECT_EQ(plan.block, (unsigned)v.blockSize);
    // Misaligned, or D not a multiple of the chunk: the general one.
    for (bool misalignedPointer : {true, false}) {
      Launch other = misalignedPointer ? make(2, 5, d) : make(2, 5, d + 1);
      if (misalignedPointer)
        arg(other, 0).data += 2;
      int64_t od = misalignedPointer ? d : d + 1;
      ASSERT_TRUE(other.plan(kernel(), plan).ok());
      const VariantInfo &g = expectFirstFit(kernel(), plan, od, false, {10});
      EXPECT_FALSE(g.vectorized);
      EXPECT_EQ(g.maxD, 0);
      EXPECT_EQ(g.schedule, "streaming");
    }
  }
}

TEST_F(FusedTest, MisalignedBasePointerPicksGeneral) {
  for (int64_t d : {8, 64, 256, 1000, 3072, 4096, 16384, 20000}) {
    SCOPED_TRACE(d);
    for (int i = 0; i < 4; ++i) {
      Launch launch = make(3, 7, d);
      arg(launch, i).data += dtypeBytes(kernel().args[i].dtype);
      LaunchPlan plan;
      ASSERT_TRUE(launch.plan(kernel(), plan).ok());
      const VariantInfo &v = expectFirstFit(kernel(), plan, d, false, {21});
      EXPECT_FALSE(v.vectorized) << kernel().args[i].name;
      EXPECT_TRUE(v.maxD == 0 || v.maxD >= d) << v.function;
      expectParams(kernel(), launch, plan, {21}, {7}, {1}, d);
    }
  }
}

TEST_F(FusedTest, EveryRowLengthHasAVariant) {
  // D dynamic: every D from 1 up past the longest bound, aligned or not,
  // gets the first variant whose guard holds.
  for (int64_t d = 1; d <= 17000; ++d) {
    for (bool aligned : {true, false}) {
      Launch launch = make(1, 3, d);
      if (!aligned)
        launch.results[0].data += 2;
      // Dense rows of d bf16 elements are 16-byte aligned when d % 8 == 0,
      // 8-byte aligned when d % 4 == 0 (the f32 operands, 4d bytes apart,
      // are then 16-byte aligned), 4-byte aligned when d is even; a result
      // 2 bytes off allows no chunk.
      int64_t maxChunk = !aligned     ? 0
                         : d % 8 == 0 ? 8
                         : d % 4 == 0 ? 4
                         : d % 2 == 0 ? 2
                                      : 0;
      LaunchPlan plan;
      Status status = launch.plan(kernel(), plan);
      ASSERT_TRUE(status.ok()) << "D = " << d << ": " << status.message();
      expectFirstFitUpTo(kernel(), plan, d, maxChunk, {3},
                         peeledServes(kernel(), launch, 8));
      if (::testing::Test::HasFailure())
        FAIL() << "at D = " << d << (aligned ? "" : ", misaligned");
    }
  }
}

//===----------------------------------------------------------------------===//
// A static D
//===----------------------------------------------------------------------===//

/// RMSNorm, D dynamic (examples/rmsnorm.mlir): a family with peeled
/// variants (rows of any length whose tensors share their offset within a
/// chunk), which the seed families above do not have (their f32
/// broadcast operands would be loaded element by element).
class PeeledTest : public ::testing::Test {
protected:
  void SetUp() override {
    artifact = loadArtifact("rmsnorm");
    ASSERT_EQ(artifact.kernels.size(), 1u);
    ASSERT_TRUE(std::any_of(kernel().variants.begin(), kernel().variants.end(),
                            [](const VariantInfo &v) { return v.peeled; }));
  }
  const KernelInfo &kernel() const { return artifact.kernels[0]; }

  /// x [B, S, D] and weight [D] bf16, the result [B, S, D]; rows of x and
  /// of the result `xStride` and `outStride` elements apart (0: dense).
  Launch make(int64_t d, int64_t xStride = 0, int64_t outStride = 0) {
    Launch launch;
    launch.args = {tensorValue(mem.tensor(BF16, {3, 7, d}, xStride)),
                   tensorValue(mem.tensor(BF16, {d}))};
    launch.results = {mem.tensor(BF16, {3, 7, d}, outStride)};
    return launch;
  }
  /// The variant planned for `launch`.
  const VariantInfo &planned(Launch &launch) {
    Status status = launch.plan(kernel(), plan);
    EXPECT_TRUE(status.ok()) << status.message();
    return launchedVariant(kernel(), plan);
  }

  Artifact artifact;
  FakeMemory mem;
  LaunchPlan plan;
};

TEST_F(PeeledTest, OddRowsOfSharedOffsetArePeeled) {
  // The smallest peeled variant whose bound holds D: none before it does.
  for (int64_t d : {121, 255, 1001, 3073, 12281}) {
    SCOPED_TRACE(d);
    Launch launch = make(d);
    const VariantInfo &v = planned(launch);
    EXPECT_TRUE(v.peeled) << v.function;
    EXPECT_FALSE(plan.vectorized);
    EXPECT_GE(v.maxD, d);
    EXPECT_LE(v.maxD,
              v.threadsPerRow * v.chunksPerThread * v.chunk - v.chunk + 1);
    for (int i = 0; i < plan.variant; ++i)
      EXPECT_FALSE(kernel().variants[i].peeled &&
                   kernel().variants[i].maxD >= d)
          << kernel().variants[i].function;
  }
}

TEST_F(PeeledTest, AlignedRowsStayVectorized) {
  Launch launch = make(1024);
  const VariantInfo &v = planned(launch);
  EXPECT_TRUE(v.vectorized) << v.function;
  EXPECT_FALSE(v.peeled);
}

TEST_F(PeeledTest, RowJustUnderACapacity) {
  // The peeled bound of a schedule is its capacity - chunk + 1; a row
  // between that bound and the capacity may span one more chunk than the
  // schedule holds. It takes the first variant in order that serves it:
  // the schedule's general variant where that one ends at the capacity,
  // but a larger schedule's peeled variant where the general variant is a
  // streamed one merged with the next schedules' (its bound, and so its
  // place in the order, is theirs).
  int checked = 0;
  for (const VariantInfo &p : kernel().variants) {
    if (!p.peeled)
      continue;
    int64_t capacity = p.threadsPerRow * p.chunksPerThread * p.chunk;
    int64_t d = capacity - 1; // odd, past the bound
    SCOPED_TRACE(d);
    Launch launch = make(d);
    const VariantInfo &v = planned(launch);
    EXPECT_FALSE(v.vectorized) << v.function;
    EXPECT_TRUE(v.maxD == 0 || v.maxD >= d) << v.function;
    if (v.peeled) {
      EXPECT_GT(v.maxD, p.maxD) << v.function;
    }
    ++checked;
  }
  EXPECT_GT(checked, 0);
  // 255: multi_row16x2's streamed general variant also serves the 16x3
  // and 16x4 schedules (to 512), so 16x3's peeled variant comes first.
  Launch launch = make(255);
  const VariantInfo &merged = planned(launch);
  EXPECT_TRUE(merged.peeled) << merged.function;
  EXPECT_EQ(merged.chunksPerThread, 3) << merged.function;
  // 2047: cta64x4's general variant ends at 2048, before cta128x3's
  // peeled one.
  launch = make(2047);
  const VariantInfo &general = planned(launch);
  EXPECT_FALSE(general.peeled || general.vectorized) << general.function;
  EXPECT_EQ(general.maxD, 2048) << general.function;
}

TEST_F(PeeledTest, OffsetsAndStridesMustAgreeModuloTheChunk) {
  // Every row tensor one element in: rows still share their offset.
  Launch launch = make(1001);
  launch.args[0].tensor.data += 2;
  launch.results[0].data += 2;
  EXPECT_TRUE(planned(launch).peeled);
  // Only x one element in: the general variant.
  launch = make(1001);
  launch.args[0].tensor.data += 2;
  const VariantInfo &g = planned(launch);
  EXPECT_FALSE(g.peeled || g.vectorized) << g.function;
  // x's rows 1009 elements apart, the result's 1001: equal modulo 8.
  launch = make(1001, 1009);
  EXPECT_TRUE(planned(launch).peeled);
  // 1002 and 1001: row r of x starts r elements further into its chunk.
  launch = make(1001, 1002);
  const VariantInfo &h = planned(launch);
  EXPECT_FALSE(h.peeled || h.vectorized) << h.function;
  // The weight [D] is loaded element by element: its offset does not
  // matter.
  launch = make(1001);
  launch.args[1].tensor.data += 2;
  EXPECT_TRUE(planned(launch).peeled);
  // A tensor at an odd byte address: no element offset at all.
  launch = make(1001);
  launch.args[0].tensor.data += 1;
  launch.results[0].data += 1;
  const VariantInfo &o = planned(launch);
  EXPECT_FALSE(o.peeled || o.vectorized) << o.function;
}

TEST_F(PeeledTest, StridesOfSizeOneDimensionsDoNotCount) {
  // B = 1: x's batch stride is never used, whatever it is.
  Launch launch;
  launch.args = {tensorValue(mem.tensor(BF16, {1, 5, 1001})),
                 tensorValue(mem.tensor(BF16, {1001}))};
  launch.args[0].tensor.strides[0] = 12345;
  launch.results = {mem.tensor(BF16, {1, 5, 1001})};
  EXPECT_TRUE(planned(launch).peeled);
}

/// The variant planLaunch picks for `launch` (which must plan).
const VariantInfo &plannedVariant(const KernelInfo &kernel, Launch &launch) {
  LaunchPlan plan;
  Status status = launch.plan(kernel, plan);
  EXPECT_TRUE(status.ok()) << status.message();
  return launchedVariant(kernel, plan);
}

/// LayerNorm, D dynamic (examples/layernorm.mlir): x [B, S, D] bf16, an
/// f32 weight and bias [D]. Its peeled variants load the weight and bias
/// in aligned 16-byte granules (shifted to each row's offset), so both
/// must be 16-byte aligned, where RMSNorm's bf16 weight, loaded element by
/// element, may lie anywhere.
TEST(PeeledGranulesTest, WideOperandsMustBeSixteenByteAligned) {
  Artifact artifact = loadArtifact("layernorm");
  ASSERT_EQ(artifact.kernels.size(), 1u);
  const KernelInfo &kernel = artifact.kernels[0];
  FakeMemory mem;
  auto make = [&](int64_t d) {
    Launch launch;
    launch.args = {tensorValue(mem.tensor(BF16, {3, 7, d})),
                   tensorValue(mem.tensor(F32, {d})),
                   tensorValue(mem.tensor(F32, {d}))};
    launch.results = {mem.tensor(BF16, {3, 7, d})};
    return launch;
  };
  Launch launch = make(1001);
  EXPECT_TRUE(plannedVariant(kernel, launch).peeled)
      << plannedVariant(kernel, launch).function;
  // The bias one element (4 bytes) in: the general variant.
  launch = make(1001);
  launch.args[2].tensor.data += 4;
  const VariantInfo &g = plannedVariant(kernel, launch);
  EXPECT_FALSE(g.peeled || g.vectorized) << g.function;
  // The weight four elements in: aligned again.
  launch = make(1001);
  launch.args[1].tensor.data += 16;
  EXPECT_TRUE(plannedVariant(kernel, launch).peeled);
  // Rows one element in, the weight and bias aligned: still peeled.
  launch = make(1001);
  launch.args[0].tensor.data += 2;
  launch.results[0].data += 2;
  EXPECT_TRUE(plannedVariant(kernel, launch).peeled);
}

/// The seeds' [B, 1, D] f32 operands are read in granules too: every batch's
/// row of them must start 16-byte aligned, so their batch stride counts
/// where B > 1 (and not where B = 1).
TEST(PeeledGranulesTest, BatchStrideOfBroadcastOperands) {
  Artifact artifact = loadArtifact("fused");
  ASSERT_EQ(artifact.kernels.size(), 1u);
  const KernelInfo &kernel = artifact.kernels[0];
  FakeMemory mem;
  // One batch: the gate's batch stride (1001 f32) is never used.
  Launch launch = fusedLaunch(mem, 1, 7, 1001);
  EXPECT_TRUE(plannedVariant(kernel, launch).peeled)
      << plannedVariant(kernel, launch).function;
  // Two batches, dense: the second batch's gate row starts 4 bytes past a
  // granule, so the general variant.
  launch = fusedLaunch(mem, 2, 7, 1001);
  const VariantInfo &g = plannedVariant(kernel, launch);
  EXPECT_FALSE(g.peeled || g.vectorized) << g.function;
  // Two batches, the gate's rows 1004 elements apart: aligned again.
  launch.args[2].tensor = mem.tensor(F32, {2, 1, 1001}, 1004);
  EXPECT_TRUE(plannedVariant(kernel, launch).peeled)
      << plannedVariant(kernel, launch).function;
}

TEST(StaticDTest, CompiledRowLength) {
  Artifact artifact = loadArtifact("fused_d3072");
  ASSERT_EQ(artifact.kernels.size(), 1u);
  const KernelInfo &kernel = artifact.kernels[0];
  ASSERT_EQ(kernel.rowLength, 3072);
  FakeMemory mem;
  auto make = [&](int64_t d) { return fusedLaunch(mem, 2, 5, d); };
  LaunchPlan plan;
  Status status = make(3072).plan(kernel, plan);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(plan.rowLength, 3072);
  // The vectorized variant (after the twin of short launches, which needs
  // the resident CTAs), or the general one when misaligned.
  EXPECT_EQ(plan.variant, 1);
  EXPECT_TRUE(plan.vectorized);
  expectFirstFit(kernel, plan, 3072, true, {10});
  Launch misaligned = make(3072);
  misaligned.args[2].tensor.data += 4;
  ASSERT_TRUE(misaligned.plan(kernel, plan).ok());
  EXPECT_EQ(plan.variant, 2);
  EXPECT_FALSE(plan.vectorized);
  expectFirstFit(kernel, plan, 3072, false, {10});
  // The shapes carry D = 3072: the first operand already disagrees.
  EXPECT_ERROR(make(1536).plan(kernel),
               "argument 'x' dimension 2 must be 3072, found 1536");
  // And with shapes that leave D dynamic, the compiled row length decides.
  KernelInfo dynamicShapes = kernel;
  for (ArgumentInfo &arg : dynamicShapes.args)
    arg.shape.back() = -1;
  dynamicShapes.results[0].shape.back() = -1;
  EXPECT_ERROR(make(1536).plan(dynamicShapes), "compiled for D = 3072",
               "found D = 1536");
  EXPECT_TRUE(make(3072).plan(dynamicShapes).ok());
}

//===----------------------------------------------------------------------===//
// Frames: gate, scale, shift are [B, F, 1, D]; S % F == 0.
//===----------------------------------------------------------------------===//

class FramesTest : public ::testing::Test {
protected:
  void SetUp() override {
    artifact = loadArtifact("frames");
    ASSERT_EQ(artifact.kernels.size(), 1u);
  }
  const KernelInfo &kernel() const { return artifact.kernels[0]; }

  Launch make(int64_t b, int64_t s, int64_t f, int64_t d) {
    Launch launch;
    launch.args = {tensorValue(mem.tensor(BF16, {b, s, d})),
                   tensorValue(mem.tensor(BF16, {b, s, d}))};
    for (int i = 0; i < 3; ++i)
      launch.args.push_back(tensorValue(mem.tensor(F32, {b, f, 1, d})));
    launch.results = {mem.tensor(BF16, {b, s, d}), mem.tensor(BF16, {b, s, d})};
    return launch;
  }

  Artifact artifact;
  FakeMemory mem;
};

TEST_F(FramesTest, ValidLaunch) {
  Launch launch = make(2, 12, 3, 256);
  LaunchPlan plan;
  Status status = launch.plan(kernel(), plan);
  ASSERT_TRUE(status.ok()) << status.message();
  const VariantInfo &v = expectFirstFit(kernel(), plan, 256, true, {24});
  EXPECT_TRUE(v.vectorized);
  EXPECT_EQ(plan.grid, ceilDiv(24, v.rowsPerCta));
  expectParams(kernel(), launch, plan, {24}, {12}, {3}, 256);
  EXPECT_EQ(paramValue(kernel(), plan, "chain_f", 0), 3u);
  EXPECT_EQ(paramValue(kernel(), plan, "chain_s", 0), 12u);
  // l = ceil(log2 12) = 4, m = floor(2^32 * 4 / 12) + 1.
  EXPECT_EQ(paramValue(kernel(), plan, "chain_s_divisor", 0),
            (4ull << 32) | 1431655766u);
  EXPECT_EQ(paramValue(kernel(), plan, "arg_stride", 2, 1), 256u);
  EXPECT_EQ(paramValue(kernel(), plan, "arg_stride", 2, 0), 3u * 256);
}

TEST_F(FramesTest, SNotDivisibleByF) {
  EXPECT_ERROR(make(2, 10, 3, 256).plan(kernel()), "S = 10",
               "is not divisible by the frame count F = 3");
  EXPECT_ERROR(make(2, 10, 0, 256).plan(kernel()),
               "not divisible by the frame count F = 0");
}

TEST_F(FramesTest, InconsistentF) {
  Launch launch = make(2, 12, 3, 256);
  launch.args[4].tensor = mem.tensor(F32, {2, 4, 1, 256});
  EXPECT_ERROR(launch.plan(kernel()), "argument 'shift' [2, 4, 1, 256]",
               "gives F = 4, expected 3");
}

TEST_F(FramesTest, ResultsOverlapEachOther) {
  Launch launch = make(2, 12, 3, 256);
  launch.results[1] = launch.results[0];
  EXPECT_ERROR(launch.plan(kernel()), "result 0 overlaps result 1");
  launch = make(2, 12, 3, 256);
  launch.results[0].data = launch.args[4].tensor.data;
  EXPECT_ERROR(launch.plan(kernel()), "result 0 overlaps argument 'shift'");
}

//===----------------------------------------------------------------------===//
// QK: two chains (q, k) written in place, a rope cache and positions.
//===----------------------------------------------------------------------===//

class QkTest : public ::testing::Test {
protected:
  void load(const std::string &name) {
    artifact = loadArtifact(name);
    ASSERT_EQ(artifact.kernels.size(), 1u);
  }
  const KernelInfo &kernel() const { return artifact.kernels[0]; }

  /// q [b, sq, d], k [b, sk, d], results in place, a [positions, 128]
  /// cache; the offset scalar if the kernel has one.
  Launch make(int64_t b, int64_t sq, int64_t sk, int64_t positions = 4096,
              int64_t d = 128) {
    Launch launch;
    launch.args = {tensorValue(mem.tensor(BF16, {b, sq, d})),
                   tensorValue(mem.tensor(BF16, {b, sk, d})),
                   tensorValue(mem.tensor(BF16, {d})),
                   tensorValue(mem.tensor(BF16, {d})),
                   tensorValue(mem.tensor(F32, {positions, 128})),
                   tensorValue(mem.tensor(I64, {b}))};
    if (kernel().args.size() == 7)
      launch.args.push_back(scalarValue(0));
    launch.results = {launch.args[0].tensor, launch.args[1].tensor};
    return launch;
  }

  Artifact artifact;
  FakeMemory mem;
};

TEST_F(QkTest, GridSumsTheChains) {
  load("qk_neox");
  Launch launch = make(2, 33, 7, 4096);
  LaunchPlan plan;
  Status status = launch.plan(kernel(), plan);
  ASSERT_TRUE(status.ok()) << status.message();
  int64_t r = launchedVariant(kernel(), plan).rowsPerCta;
  ASSERT_GT(r, 1) << "the test needs a multi-row schedule";
  EXPECT_EQ(plan.grid, ceilDiv(66, r) + ceilDiv(14, r));
  EXPECT_EQ(plan.rowLength, 128);
  EXPECT_TRUE(plan.vectorized);
  expectFirstFit(kernel(), plan, 128, true, {66, 14});
  expectParams(kernel(), launch, plan, {66, 14}, {33, 7}, {1, 1}, 128);
  EXPECT_EQ(paramValue(kernel(), plan, "chain_rows", 1), 14u);
  EXPECT_EQ(paramValue(kernel(), plan, "cache_rows", 4), 4096u);
  // One chain empty: only the other's CTAs.
  launch = make(2, 0, 7);
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_EQ(plan.grid, ceilDiv(14, r));
}

TEST_F(QkTest, AlignmentOfTheCacheCounts) {
  // The rotary cache is read in chunks like the rows: misaligned, the
  // general variant. The positions are not: their alignment does not
  // matter.
  load("qk_neox");
  Launch launch = make(2, 8, 8);
  launch.args[4].tensor.data += 4;
  LaunchPlan plan;
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_FALSE(plan.vectorized);
  expectFirstFit(kernel(), plan, 128, false, {16, 16});
  launch = make(2, 8, 8);
  launch.args[5].tensor.data += 8;
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_TRUE(plan.vectorized);
  expectFirstFit(kernel(), plan, 128, true, {16, 16});
  // The in-place rows count, read and written through one pointer.
  launch = make(2, 8, 8);
  launch.args[1].tensor.data += 2;
  launch.results[1] = launch.args[1].tensor;
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_FALSE(plan.vectorized);
  expectFirstFit(kernel(), plan, 128, false, {16, 16});
}

TEST_F(QkTest, InPlaceResultMustBeItsArgument) {
  load("qk_neox");
  Launch launch = make(2, 8, 8);
  launch.results[0] = mem.tensor(BF16, {2, 8, 128});
  EXPECT_ERROR(launch.plan(kernel()), "result 0 is written in place into 'q'",
               "pass that tensor as the result");
  launch = make(2, 8, 8);
  launch.results[1] = launch.args[0].tensor; // q for k
  EXPECT_ERROR(launch.plan(kernel()), "result 1 is written in place into 'k'");
  launch = make(2, 8, 8);
  launch.results[1].strides[0] *= 2; // same pointer, another view
  EXPECT_ERROR(launch.plan(kernel()), "result 1 is written in place into 'k'");
}

TEST_F(QkTest, StaticSizes) {
  load("qk_neox");
  Launch launch = make(2, 8, 8);
  launch.args[0].tensor = mem.tensor(BF16, {2, 8, 64});
  launch.results[0] = launch.args[0].tensor;
  EXPECT_ERROR(launch.plan(kernel()),
               "argument 'q' dimension 2 must be 128, found 64");
  launch = make(2, 8, 8);
  launch.args[4].tensor = mem.tensor(F32, {4096, 64});
  EXPECT_ERROR(launch.plan(kernel()),
               "argument 'cos_sin' dimension 1 must be 128, found 64");
  launch = make(2, 8, 8);
  launch.args[5].tensor.dtype = I32;
  EXPECT_ERROR(launch.plan(kernel()),
               "argument 'positions' must be i64, found i32");
}

TEST_F(QkTest, BatchAgreesAcrossChains) {
  load("qk_neox");
  // positions is [B] of both chains.
  Launch launch = make(2, 8, 8);
  launch.args[5].tensor = mem.tensor(I64, {3});
  EXPECT_ERROR(launch.plan(kernel()), "argument 'positions' [3]",
               "gives B = 3, expected 2");
  launch = make(2, 8, 8);
  launch.args[1].tensor = mem.tensor(BF16, {3, 8, 128});
  launch.results[1] = launch.args[1].tensor;
  EXPECT_ERROR(launch.plan(kernel()), "argument 'positions' [2]",
               "gives B = 2, expected 3");
}

TEST_F(QkTest, ScalarOffset) {
  load("qk_interleaved");
  ASSERT_EQ(kernel().args.size(), 7u);
  Launch launch = make(2, 8, 8);
  launch.args[6] = scalarValue(int64_t(1) << 40);
  LaunchPlan plan;
  Status status = launch.plan(kernel(), plan);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(paramValue(kernel(), plan, "arg_scalar", 6), uint64_t(1) << 40);
  expectParams(kernel(), launch, plan, {16, 16}, {8, 8}, {1, 1}, 128);
  launch.args[6] = scalarValue(-1);
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_EQ(paramValue(kernel(), plan, "arg_scalar", 6), ~uint64_t(0));
  // A tensor where the scalar goes.
  launch.args[6] = tensorValue(mem.tensor(I64, {1}));
  EXPECT_ERROR(launch.plan(kernel()), "argument 'offset' must be a scalar");
}

TEST_F(QkTest, ScalarMustFitI32) {
  // No example has an i32 scalar; the metadata is edited to have one.
  load("qk_interleaved");
  KernelInfo k = kernel();
  bool found = false;
  for (ParamInfo &param : k.params)
    if (param.kind == "arg_scalar") {
      param.type = "i32";
      found = true;
    }
  ASSERT_TRUE(found);
  Launch launch = make(2, 8, 8);
  LaunchPlan plan;
  for (int64_t bad :
       {int64_t(INT32_MAX) + 1, int64_t(INT32_MIN) - 1, int64_t(1) << 40}) {
    launch.args[6] = scalarValue(bad);
    EXPECT_ERROR(launch.plan(k), "scalar 'offset' does not fit in i32");
  }
  launch.args[6] = scalarValue(INT32_MAX);
  ASSERT_TRUE(launch.plan(k, plan).ok());
  EXPECT_EQ(paramValue(k, plan, "arg_scalar", 6), (uint64_t)INT32_MAX);
  // Negative: the low four bytes hold the i32, the rest is zero.
  launch.args[6] = scalarValue(-1);
  ASSERT_TRUE(launch.plan(k, plan).ok());
  EXPECT_EQ(paramValue(k, plan, "arg_scalar", 6), 0xffffffffu);
}

//===----------------------------------------------------------------------===//
// QK with D dynamic: in place and rotated, every variant holds its rows in
// registers, so rows longer than the longest variant have none.
//===----------------------------------------------------------------------===//

class QkDynamicDTest : public QkTest {
protected:
  void SetUp() override {
    load("qk_neox_dynamic_d");
    ASSERT_EQ(kernel().rowLength, -1);
    for (const VariantInfo &v : kernel().variants) {
      ASSERT_GT(v.maxD, 0) << v.function << " is unbounded";
      longest = std::max(longest, v.maxD);
    }
  }
  int64_t longest = 0;
};

TEST_F(QkDynamicDTest, FamilyServesRowsUpToTheLongest) {
  for (int64_t d : {128, 256, 1000, 3072, 4096}) {
    SCOPED_TRACE(d);
    ASSERT_LE(d, longest);
    Launch launch = make(2, 8, 3, 4096, d);
    LaunchPlan plan;
    Status status = launch.plan(kernel(), plan);
    ASSERT_TRUE(status.ok()) << status.message();
    const VariantInfo &v = expectFirstFit(kernel(), plan, d, true, {16, 6});
    EXPECT_TRUE(v.vectorized);
    EXPECT_GE(v.maxD, d);
    expectParams(kernel(), launch, plan, {16, 6}, {8, 3}, {1, 1}, d);
    // Misaligned: a general variant, also register-resident.
    launch.args[0].tensor.data += 2;
    launch.results[0] = launch.args[0].tensor;
    ASSERT_TRUE(launch.plan(kernel(), plan).ok());
    const VariantInfo &g = expectFirstFit(kernel(), plan, d, false, {16, 6});
    EXPECT_FALSE(g.vectorized);
    EXPECT_GT(g.chunksPerThread, 0);
    EXPECT_GE(g.maxD, d);
  }
  // The longest row, aligned or not.
  Launch launch = make(2, 8, 3, 4096, longest);
  LaunchPlan plan;
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_EQ(launchedVariant(kernel(), plan).maxD, longest);
  expectFirstFit(kernel(), plan, longest, true, {16, 6});
  launch.args[3].tensor.data += 2;
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_FALSE(plan.vectorized);
  EXPECT_EQ(launchedVariant(kernel(), plan).maxD, longest);
  expectFirstFit(kernel(), plan, longest, false, {16, 6});
}

TEST_F(QkDynamicDTest, RowLongerThanEveryVariant) {
  // (Named strings: EXPECT_ERROR keeps the words it looks for as pointers.)
  const std::string past =
      "no variant serves rows of D = " + std::to_string(longest + 8);
  const std::string justPast =
      "no variant serves rows of D = " + std::to_string(longest + 1);
  const std::string most = "the longest served is " + std::to_string(longest);
  EXPECT_ERROR(make(2, 8, 3, 4096, longest + 8).plan(kernel()),
               "kernel 'qk_rmsnorm_rope_neox_dynamic_d'", past.c_str(),
               most.c_str());
  // Misaligned, one element longer, or much longer: the same.
  Launch launch = make(2, 8, 3, 4096, longest + 8);
  launch.args[0].tensor.data += 2;
  launch.results[0] = launch.args[0].tensor;
  EXPECT_ERROR(launch.plan(kernel()), past.c_str(), most.c_str());
  EXPECT_ERROR(make(2, 8, 3, 4096, longest + 1).plan(kernel()),
               justPast.c_str(), most.c_str());
  EXPECT_ERROR(make(1, 1, 1, 16, 1 << 20).plan(kernel()),
               "no variant serves rows of D = 1048576", most.c_str());
  // Without rows there is nothing to launch, but the rows still have no
  // variant: the same answer as with rows.
  EXPECT_ERROR(make(0, 8, 3, 4096, longest + 8).plan(kernel()), past.c_str());
}

TEST_F(QkDynamicDTest, RowShorterThanTheRotaryWidth) {
  // The cache is [max_pos, 128]: a rotary pair would leave a row of 64.
  EXPECT_ERROR(make(2, 8, 3, 4096, 64).plan(kernel()),
               "argument 'cos_sin' has rotary width 128, more than the row "
               "length D = 64");
  Launch launch = make(2, 8, 3, 4096, 128);
  LaunchPlan plan;
  EXPECT_TRUE(launch.plan(kernel(), plan).ok());
}

//===----------------------------------------------------------------------===//
// select01: an index [B, S] shared by two chains.
//===----------------------------------------------------------------------===//

TEST(SelectTest, ChainsAgreeThroughTheIndex) {
  Artifact artifact = loadArtifact("select");
  ASSERT_EQ(artifact.kernels.size(), 1u);
  const KernelInfo &kernel = artifact.kernels[0];
  ASSERT_EQ(kernel.args.size(), 8u);
  FakeMemory mem;
  auto make = [&](int64_t b, int64_t s, int64_t d) {
    Launch launch;
    launch.args = {tensorValue(mem.tensor(BF16, {b, s, d})),
                   tensorValue(mem.tensor(I32, {b, s}))};
    for (int i = 0; i < 6; ++i)
      launch.args.push_back(tensorValue(mem.tensor(BF16, {b, d})));
    launch.results = {mem.tensor(BF16, {b, s, d}), mem.tensor(BF16, {b, s, d})};
    return launch;
  };
  Launch launch = make(2, 5, 64);
  LaunchPlan plan;
  Status status = launch.plan(kernel, plan);
  ASSERT_TRUE(status.ok()) << status.message();
  const VariantInfo &v = expectFirstFit(kernel, plan, 64, true, {10, 10});
  EXPECT_EQ(plan.grid, 2 * ceilDiv(10, v.rowsPerCta));
  expectParams(kernel, launch, plan, {10, 10}, {5, 5}, {1, 1}, 64);
  launch.results[1] = mem.tensor(BF16, {2, 6, 64});
  EXPECT_ERROR(launch.plan(kernel), "result 1 [2, 6, 64]",
               "gives S = 6, expected 5");
  launch = make(2, 5, 64);
  launch.args[4].tensor = mem.tensor(BF16, {4, 64});
  EXPECT_ERROR(launch.plan(kernel), "argument 'gate0' [4, 64]",
               "gives B = 4, expected 2");
  launch = make(2, 5, 64);
  launch.args[1].tensor.dtype = I64;
  EXPECT_ERROR(launch.plan(kernel), "argument 'index' must be i32, found i64");
}

//===----------------------------------------------------------------------===//
// Quantized outputs (hand-written metadata, RuntimeTestSupport.h): 8-bit
// data arguments and results, and a [B, S] f32 result (one value per row).
//===----------------------------------------------------------------------===//

class QuantizedTest : public ::testing::Test {
protected:
  void SetUp() override {
    artifact = quantizedArtifact();
    ASSERT_EQ(artifact.kernels.size(), 1u);
    ASSERT_EQ(kernel().results[1].shape.size(), 2u);
  }
  const KernelInfo &kernel() const { return artifact.kernels[0]; }

  /// x f8E4M3FN, r f8E5M2 [b, s, d], bias i8 [d], w f32 [d] -> q i8,
  /// scale f32 [b, s], e4 f8E4M3FN, e5 f8E5M2 [b, s, d]; dense.
  Launch make(int64_t b, int64_t s, int64_t d) {
    Launch launch;
    launch.args = {tensorValue(mem.tensor(F8E4M3FN, {b, s, d})),
                   tensorValue(mem.tensor(F8E5M2, {b, s, d})),
                   tensorValue(mem.tensor(I8, {d})),
                   tensorValue(mem.tensor(F32, {d}))};
    launch.results = {mem.tensor(I8, {b, s, d}), mem.tensor(F32, {b, s}),
                      mem.tensor(F8E4M3FN, {b, s, d}),
                      mem.tensor(F8E5M2, {b, s, d})};
    return launch;
  }
  Tensor &scale(Launch &launch) { return launch.results[1]; }

  Artifact artifact;
  FakeMemory mem;
};

TEST_F(QuantizedTest, ValidLaunch) {
  Launch launch = make(2, 5, 64);
  LaunchPlan plan;
  Status status = launch.plan(kernel(), plan);
  ASSERT_TRUE(status.ok()) << status.message();
  expectFirstFit(kernel(), plan, 64, true, {10});
  EXPECT_TRUE(plan.vectorized);
  expectParams(kernel(), launch, plan, {10}, {5}, {1}, 64);
  // The [B, S] result: its pointer and the stride between its batches.
  EXPECT_EQ(paramValue(kernel(), plan, "result_ptr", 1),
            launch.results[1].data);
  EXPECT_EQ(paramValue(kernel(), plan, "result_stride", 1, 0), 5u);
  EXPECT_EQ(paramValue(kernel(), plan, "result_stride", 0, 0), 5u * 64);
  // Rows of a padded [B, S] result.
  scale(launch) = mem.tensor(F32, {2, 5}, 7);
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_EQ(paramValue(kernel(), plan, "result_stride", 1, 0), 7u);
  // No rows: nothing to launch.
  launch = make(0, 5, 64);
  status = launch.plan(kernel(), plan);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(plan.grid, 0u);
}

TEST_F(QuantizedTest, PerRowResultSizesTheChain) {
  // With B and S from the [B, S] result alone (the metadata's other
  // shapes edited to static rows of D), the chain still has its rows.
  KernelInfo k = kernel();
  k.args[0].bcast = k.args[1].bcast = "D";
  k.args[0].shape = k.args[1].shape = {-1};
  for (int r : {0, 2, 3})
    k.results[r].shape = {-1, -1};
  Launch launch = make(3, 4, 64);
  for (int i : {0, 1})
    launch.args[i].tensor = mem.tensor(launch.args[i].tensor.dtype, {64});
  for (int r : {0, 2, 3})
    launch.results[r] = mem.tensor(launch.results[r].dtype, {3, 4});
  LaunchPlan plan;
  Status status = launch.plan(k, plan);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(paramValue(k, plan, "chain_rows", 0), 12u);
  EXPECT_EQ(paramValue(k, plan, "chain_s", 0), 4u);
}

TEST_F(QuantizedTest, PerRowResultMustAgreeWithTheRows) {
  Launch launch = make(2, 5, 64);
  scale(launch) = mem.tensor(F32, {2, 6});
  EXPECT_ERROR(launch.plan(kernel()), "kernel 'quant'", "result 1 [2, 6]",
               "gives S = 6, expected 5");
  launch = make(2, 5, 64);
  scale(launch) = mem.tensor(F32, {3, 5});
  EXPECT_ERROR(launch.plan(kernel()), "result 1 [3, 5]",
               "gives B = 3, expected 2");
  // A static S in the metadata is checked as such.
  KernelInfo k = kernel();
  k.results[1].shape = {-1, 8};
  EXPECT_ERROR(make(2, 5, 64).plan(k),
               "result 1 dimension 1 must be 8, found 5");
  EXPECT_TRUE(make(2, 8, 64).plan(k).ok());
}

TEST_F(QuantizedTest, PerRowResultRank) {
  // [B, S, D] where [B, S] is expected, and the other way round.
  Launch launch = make(2, 5, 64);
  scale(launch) = mem.tensor(F32, {2, 5, 64});
  EXPECT_ERROR(launch.plan(kernel()),
               "result 1 must have rank 2, found rank 3");
  launch = make(2, 5, 64);
  scale(launch) = mem.tensor(F32, {10});
  EXPECT_ERROR(launch.plan(kernel()),
               "result 1 must have rank 2, found rank 1");
  launch = make(2, 5, 64);
  launch.results[0] = mem.tensor(I8, {2, 5});
  EXPECT_ERROR(launch.plan(kernel()),
               "result 0 must have rank 3, found rank 2");
  // Its rows contiguous, like every tensor's.
  launch = make(2, 5, 64);
  scale(launch).strides[1] = 2;
  EXPECT_ERROR(launch.plan(kernel()), "result 1",
               "the last dimension must be contiguous", "found stride 2");
}

TEST_F(QuantizedTest, WrongDType) {
  // Messages name the dtype expected and the one found, by their artifact
  // names.
  Launch launch = make(2, 5, 64);
  launch.args[0].tensor.dtype = F8E5M2;
  EXPECT_ERROR(launch.plan(kernel()),
               "argument 'x' must be f8E4M3FN, found f8E5M2");
  launch = make(2, 5, 64);
  launch.args[1].tensor.dtype = BF16;
  EXPECT_ERROR(launch.plan(kernel()),
               "argument 'r' must be f8E5M2, found bf16");
  launch = make(2, 5, 64);
  launch.args[2].tensor.dtype = F8E4M3FN;
  EXPECT_ERROR(launch.plan(kernel()),
               "argument 'bias' must be i8, found f8E4M3FN");
  launch = make(2, 5, 64);
  launch.results[0].dtype = F8E4M3FN;
  EXPECT_ERROR(launch.plan(kernel()), "result 0 must be i8, found f8E4M3FN");
  launch = make(2, 5, 64);
  scale(launch).dtype = BF16;
  EXPECT_ERROR(launch.plan(kernel()), "result 1 must be f32, found bf16");
  launch = make(2, 5, 64);
  launch.results[3].dtype = I8;
  EXPECT_ERROR(launch.plan(kernel()), "result 3 must be f8E5M2, found i8");
}

TEST_F(QuantizedTest, PerRowResultAlignmentDoesNotMatter) {
  // The kernel stores one 4-byte value per row: a [B, S] result 4 bytes
  // off 16, or with rows a 4-byte multiple apart, keeps the vectorized
  // variant.
  Launch launch = make(2, 5, 64);
  scale(launch).data += 4;
  LaunchPlan plan;
  Status status = launch.plan(kernel(), plan);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(plan.vectorized);
  expectFirstFit(kernel(), plan, 64, true, {10});
  launch = make(2, 5, 64);
  scale(launch) = mem.tensor(F32, {2, 5}, 7);
  scale(launch).data += 12;
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_TRUE(plan.vectorized);
  // The [B, S, D] results and the 1-byte arguments still count: a 16-byte
  // access of 16 one-byte elements needs 16-byte alignment.
  for (int r : {0, 2, 3}) {
    SCOPED_TRACE(r);
    launch = make(2, 5, 64);
    launch.results[r].data += 4;
    ASSERT_TRUE(launch.plan(kernel(), plan).ok());
    EXPECT_FALSE(plan.vectorized);
    expectFirstFit(kernel(), plan, 64, false, {10});
  }
  for (int i : {0, 1, 2}) {
    SCOPED_TRACE(i);
    launch = make(2, 5, 64);
    launch.args[i].tensor.data += 8;
    ASSERT_TRUE(launch.plan(kernel(), plan).ok());
    EXPECT_FALSE(plan.vectorized);
  }
  // Rows of 1-byte elements 8 bytes apart: not vectorized either.
  launch = make(2, 5, 64);
  launch.args[0].tensor = mem.tensor(F8E4M3FN, {2, 5, 64}, 72);
  ASSERT_TRUE(launch.plan(kernel(), plan).ok());
  EXPECT_FALSE(plan.vectorized);
}

TEST_F(QuantizedTest, PerRowResultOverlaps) {
  // The overlap rules of every result: 4 bytes per element of the [B, S]
  // result, 1 per element of the 8-bit tensors.
  Launch launch = make(2, 5, 64);
  scale(launch).data = launch.args[0].tensor.data + 2 * 5 * 64 - 4;
  EXPECT_ERROR(launch.plan(kernel()), "result 1 overlaps argument 'x'");
  launch = make(2, 5, 64);
  scale(launch).data = launch.results[0].data + 16;
  EXPECT_ERROR(launch.plan(kernel()), "overlaps result");
  // Ending right where w begins: adjacent, not overlapping.
  launch = make(2, 5, 64);
  scale(launch).data = launch.args[3].tensor.data - 2 * 5 * 4;
  Status status = launch.plan(kernel());
  EXPECT_TRUE(status.ok()) << status.message();
  // A 1-byte result whose first byte is the last of the 16-byte bias
  // overlaps it; one byte further it does not.
  launch = make(1, 1, 16);
  launch.results[2].data = launch.args[2].tensor.data + 15;
  EXPECT_ERROR(launch.plan(kernel()), "result 2 overlaps argument 'bias'");
  launch.results[2].data += 1;
  status = launch.plan(kernel());
  EXPECT_TRUE(status.ok()) << status.message();
}

/// A launch of layernorm_modulate_quant_fp8 (x [B, S, D] bf16; scale,
/// shift [B, 1, D] f32; q [B, S, D] fp8, s [B, S] f32) on fake memory.
Launch lmqLaunch(FakeMemory &mem, int64_t b, int64_t s, int64_t d) {
  Launch launch;
  launch.args = {tensorValue(mem.tensor(BF16, {b, s, d})),
                 tensorValue(mem.tensor(F32, {b, 1, d})),
                 tensorValue(mem.tensor(F32, {b, 1, d}))};
  launch.results = {mem.tensor(F8E4M3FN, {b, s, d}), mem.tensor(F32, {b, s})};
  return launch;
}

} // namespace

TEST(PersistentTest, PersistentVariantsCarryTheirBatches) {
  // layernorm_modulate_quant_fp8 at D = 4096: a persistent vectorized
  // variant, whose CTAs walk the rows of one batch entry. The plan's grid
  // is one CTA per row (what any launch may use); its batches and rows per
  // batch let the launch take fewer CTAs per entry.
  Artifact artifact = loadArtifact("lmq_d4096");
  ASSERT_EQ(artifact.kernels.size(), 1u);
  const KernelInfo &kernel = artifact.kernels[0];
  FakeMemory mem;
  Launch launch = lmqLaunch(mem, 3, 7, 4096);
  LaunchPlan plan;
  Status status = launch.plan(kernel, plan);
  ASSERT_TRUE(status.ok()) << status.message();
  const VariantInfo &v = launchedVariant(kernel, plan);
  EXPECT_EQ(v.schedule, "persistent");
  EXPECT_TRUE(v.vectorized);
  EXPECT_EQ(v.rowsPerCta, 1);
  EXPECT_EQ(plan.grid, 21u);
  EXPECT_EQ(plan.batches, 3);
  EXPECT_EQ(plan.rowsPerBatch, 7);
  EXPECT_EQ(plan.ctasPerBatch, 7);
  // Misaligned: the general variant, one row per CTA, no batches.
  launch.args[0].tensor.data += 2;
  status = launch.plan(kernel, plan);
  ASSERT_TRUE(status.ok()) << status.message();
  const VariantInfo &g = launchedVariant(kernel, plan);
  EXPECT_NE(g.schedule, "persistent");
  EXPECT_FALSE(g.vectorized);
  EXPECT_EQ(plan.grid, 21u);
  EXPECT_EQ(plan.batches, 0);
}

TEST(PersistentTest, SeveralRowsPerPersistentCta) {
  // layernorm_modulate_quant_fp8 at D = 1024: rows of 32 threads, four per
  // persistent CTA, each CTA's rows consecutive tokens of one entry. The
  // grid is B * ceil(S / 4), the most CTAs per entry that have rows, and a
  // multiple of B (B * S / 4 rounded up, 4 here, is not).
  Artifact artifact = loadArtifact("lmq_d1024");
  ASSERT_EQ(artifact.kernels.size(), 1u);
  const KernelInfo &kernel = artifact.kernels[0];
  FakeMemory mem;
  Launch launch = lmqLaunch(mem, 3, 5, 1024);
  LaunchPlan plan;
  Status status = launch.plan(kernel, plan);
  ASSERT_TRUE(status.ok()) << status.message();
  const VariantInfo &v = launchedVariant(kernel, plan);
  EXPECT_EQ(v.schedule, "persistent");
  EXPECT_TRUE(v.vectorized);
  EXPECT_EQ(v.threadsPerRow, 32);
  EXPECT_EQ(v.rowsPerCta, 4);
  EXPECT_EQ(plan.batches, 3);
  EXPECT_EQ(plan.rowsPerBatch, 5);
  EXPECT_EQ(plan.ctasPerBatch, 2);
  EXPECT_EQ(plan.grid, 6u);
}
