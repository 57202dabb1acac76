//===- TuneMode.cpp - nf-run --tune: choose a variant per row length ------===//
//
// Part of normfuse. Checks every variant that serves the --dims shapes
// against the default variant's results, times those that agree, and
// records the fastest for that D in ARTIFACT.tune (docs/Artifact.md, "Tune
// files").
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"
#include "NfRun.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

using namespace nf::rt;

namespace nfrun {
namespace {

/// The bytes of set 0's buffers (BenchInputs::first) after one launch of
/// variant `variant` on set 0 as staged (inputs restored, results poisoned
/// with NaN first).
std::vector<std::vector<unsigned char>>
runOnFirstSet(const CudaDriver *cu, const Module &module, const KernelInfo &k,
              BenchInputs &in, int variant) {
  for (Buffer &b : in.first)
    cu->cuMemcpyHtoD_v2(b.alloc, b.expected.data(), b.allocBytes);
  if (Status st =
          module.launch(k.name.c_str(), in.args[0].data(), in.args[0].size(),
                        in.results[0].data(), in.results[0].size(), nullptr,
                        nullptr, variant);
      !st)
    die(st.message());
  checkCuda(cu, cu->cuCtxSynchronize(), "kernel execution");
  std::vector<std::vector<unsigned char>> out;
  for (Buffer &b : in.first) {
    out.emplace_back(b.allocBytes);
    cu->cuMemcpyDtoH_v2(out.back().data(), b.alloc, b.allocBytes);
  }
  return out;
}

/// The relative L2 difference of two copies of a buffer's elements, NaN
/// where `got` has a NaN that `ref` has not.
double relativeDifference(const Buffer &b,
                          const std::vector<unsigned char> &got,
                          const std::vector<unsigned char> &ref) {
  const Tensor &t = b.tensor;
  int bytes = dtypeBytes(t.dtype);
  size_t base = t.data - b.alloc;
  int64_t count = countElements(t);
  double diff = 0, norm = 0;
  for (int64_t e = 0; e < count; ++e) {
    double g = toDouble(&got[base + e * bytes], t.dtype);
    double r = toDouble(&ref[base + e * bytes], t.dtype);
    if (std::isnan(g) != std::isnan(r))
      return NAN;
    if (std::isnan(r))
      continue;
    diff += (g - r) * (g - r);
    norm += r * r;
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

/// nf-run --tune: times every variant of `k` whose guard holds for the
/// shapes of `in`, keeps those whose results on `check` (the same D, a few
/// rows of varied data) match the default variant's,
/// and records the fastest in the artifact's tune file (the default where
/// no other is at least kTuneMargin faster). Returns the exit status.
constexpr double kTuneMargin = 0.01;
constexpr int kTuneRounds = 3;
int tuneKernel(const CudaDriver *cu, const std::string &artifactPath,
               const Artifact &artifact, const Module &module,
               const KernelInfo &k, BenchInputs &in, BenchInputs &check,
               const std::string &dimsText, int iters) {
  LaunchPlan plan;
  if (Status st = planLaunch(k, in.args[0].data(), in.args[0].size(),
                             in.results[0].data(), in.results[0].size(), plan);
      !st)
    die(st.message());
  int defaultVariant = plan.variant;
  int64_t d = plan.rowLength;
  std::vector<std::vector<unsigned char>> ref =
      runOnFirstSet(cu, module, k, check, defaultVariant);
  bool f32 = true;
  for (const ResultInfo &r : k.results)
    f32 &= r.dtype == DType::F32;
  double tol = f32 ? 1e-5 : 1e-2;
  std::vector<int> candidates;
  int mismatches = 0;
  for (size_t v = 0; v < k.variants.size(); ++v) {
    LaunchPlan p;
    if (!planLaunch(k, in.args[0].data(), in.args[0].size(),
                    in.results[0].data(), in.results[0].size(), p, (int)v))
      continue;
    std::vector<std::vector<unsigned char>> got =
        runOnFirstSet(cu, module, k, check, (int)v);
    double worst = 0;
    for (size_t b = 0; b < check.first.size(); ++b) {
      double e = relativeDifference(check.first[b], got[b], ref[b]);
      worst = std::isnan(e) ? e : std::max(worst, e);
      if (std::isnan(worst))
        break;
    }
    if (std::isnan(worst) || worst > tol) {
      ++mismatches;
      std::printf("MISMATCH %s D=%lld %s: results differ from %s's "
                  "(relative error %.3e)\n",
                  k.name.c_str(), (long long)d, k.variants[v].function.c_str(),
                  k.variants[defaultVariant].function.c_str(), worst);
      continue;
    }
    candidates.push_back((int)v);
  }
  CUstream stream;
  checkCuda(cu, cu->cuStreamCreate(&stream, 0), "cuStreamCreate");
  std::vector<double> best(candidates.size(), INFINITY);
  for (int round = 0; round < kTuneRounds; ++round)
    for (size_t c = 0; c < candidates.size(); ++c)
      best[c] = std::min(best[c], timeLaunches(cu, module, k, in, stream, iters,
                                               candidates[c], nullptr));
  double defaultUs = INFINITY;
  size_t fastest = 0;
  for (size_t c = 0; c < candidates.size(); ++c) {
    if (candidates[c] == defaultVariant)
      defaultUs = best[c];
    if (best[c] < best[fastest])
      fastest = c;
  }
  int chosen = best[fastest] < defaultUs * (1 - kTuneMargin)
                   ? candidates[fastest]
                   : defaultVariant;
  for (size_t c = 0; c < candidates.size(); ++c)
    // Times only: what ranks the candidates (bench/roofline.py gives the
    // fraction of an SM copy kernel).
    std::printf(
        "TUNE %s dims=%s variant=%s kernel_us=%.2f vs_default=%.3f%s%s\n",
        k.name.c_str(), dimsText.c_str(),
        k.variants[candidates[c]].function.c_str(), best[c],
        defaultUs / best[c], candidates[c] == defaultVariant ? " default" : "",
        candidates[c] == chosen ? " chosen" : "");
  // Record the choice, keeping the file's other entries for this build.
  TuningTable table;
  if (Status st = readTuning(artifact, artifactPath, table); !st)
    die(st.message());
  size_t index = &k - artifact.kernels.data();
  table.set(index, d, chosen);
  std::string path = getTuneFilePath(artifactPath);
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << formatTuning(artifact, table);
    if (!out.flush())
      die("cannot write '" + temporary + "'");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
    die("cannot replace '" + path + "'");
  std::printf("TUNED %s D=%lld -> %s (%.2f us, default %.2f us), in %s\n",
              k.name.c_str(), (long long)d, k.variants[chosen].function.c_str(),
              best[std::find(candidates.begin(), candidates.end(), chosen) -
                   candidates.begin()],
              defaultUs, path.c_str());
  return mismatches ? 1 : 0;
}

} // namespace

int runTune(const CudaDriver *cu, const std::string &artifactPath,
            const Artifact &artifact, const Module &module, const KernelInfo &k,
            const std::map<std::string, std::string> &dims, BenchInputs &in,
            const std::string &dimsText, int iters) {
  // The candidates' results are compared on a few rows of varied data
  // (same D): comparing every row of the timed sets, for every
  // candidate, would take longer than the timing.
  std::map<std::string, std::string> few = dims;
  few["B"] = "1";
  int64_t f = few.count("F") ? parseCount("--dims F", few["F"]) : 1;
  few["S"] = std::to_string(std::max<int64_t>(f, 1) * 16);
  BenchInputs check = makeBenchInputs(cu, k, few, true);
  return tuneKernel(cu, artifactPath, artifact, module, k, in, check, dimsText,
                    iters);
}

} // namespace nfrun
