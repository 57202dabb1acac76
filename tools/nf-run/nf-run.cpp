//===- nf-run.cpp - run generated kernels on a GPU ------------------------===//
//
// Part of normfuse. MLIR-free (it builds with the runtime on the GPU
// machine). Three modes:
//
//   nf-run ARTIFACT --case DIR [--misalign] [--pad N] [--graph]
//     Runs the kernel on the inputs nf-interp wrote to DIR and compares
//     every output with the interpreter's: ||out - ref|| / ||ref|| <= 1e-5
//     (f32) or 1e-2 (f16, bf16), NaN never passes. Outputs are poisoned
//     with NaN before the launch and must be fully written; guard bytes
//     around every buffer, and the gaps of padded rows, must be untouched.
//     --misalign offsets every base pointer by one element (never 16-byte
//     aligned); --pad N pads rows by N elements; --graph also replays the
//     launch from a CUDA graph and requires identical results.
//
//   nf-run ARTIFACT --bench --dims B=1,S=32760,D=1536[,F=..,P=..] [--iters N]
//          [--pad N]
//     Times the kernel (CUDA events, rotating input sets) against an SM
//     copy kernel moving the same bytes in the same run (half read, half
//     written, rounded down to 16-byte vectors), and prints bytes moved,
//     time, and the fraction of the copy floor. --pad N pads the rows of
//     every tensor of rank 2 or more by N elements (the bytes moved, and
//     the copy's, stay those of the dense tensors).
//
//   nf-run ARTIFACT --tune --dims B=..,S=..,D=..[,..] [--iters N]
//     Times every variant whose guard holds for those shapes (each first
//     checked against the default variant's results on varied data; one
//     that differs is reported as MISMATCH and the exit status is 1) and
//     records the fastest for that D in ARTIFACT.tune, where the runtime
//     finds it (docs/Artifact.md, "Tune files").
//
// Reference data is computed on the CPU machine (nf-interp needs MLIR) and
// carried here: the GPU machine has no MLIR.
//
// This file parses the options, loads the artifact and hands over to the
// mode: CaseMode.cpp, BenchMode.cpp, TuneMode.cpp; Buffers.cpp makes the
// device buffers and input sets they launch on.
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"
#include "NfRun.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

using namespace nf::rt;
using namespace nfrun;

[[noreturn]] void nfrun::die(const std::string &message) {
  std::fprintf(stderr, "nf-run: error: %s\n", message.c_str());
  std::exit(2);
}

void nfrun::checkCuda(const CudaDriver *cu, CUresult r, const char *what) {
  if (r != 0)
    die(std::string(what) + ": " + describeCudaError(r));
}

int64_t nfrun::parseCount(const std::string &option, const std::string &text) {
  try {
    size_t used = 0;
    long long v = std::stoll(text, &used);
    if (used == text.size() && v >= 0)
      return v;
  } catch (...) {
  }
  die(option + " expects a non-negative integer, found '" + text + "'");
}

namespace {

/// The symbolic sizes of --dims B=..,S=..,D=..: letter -> value text.

std::map<std::string, std::string> parseDims(const std::string &text) {
  std::map<std::string, std::string> dims;
  std::stringstream ss(text);
  for (std::string kv; std::getline(ss, kv, ',');) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos)
      die("bad --dims entry '" + kv + "'");
    dims[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return dims;
}

} // namespace

int main(int argc, char **argv) {
  std::string artifactPath, caseDir, dimsText, kernelName;
  bool misalign = false, graph = false, bench = false, tune = false;
  int64_t pad = 0;
  int iters = 50;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        die("missing value after " + a);
      return argv[++i];
    };
    if (a == "--case")
      caseDir = value();
    else if (a == "--misalign")
      misalign = true;
    else if (a == "--pad")
      pad = parseCount(a, value());
    else if (a == "--graph")
      graph = true;
    else if (a == "--bench")
      bench = true;
    else if (a == "--tune")
      tune = true;
    else if (a == "--dims")
      dimsText = value();
    else if (a == "--iters")
      iters = std::max<int64_t>(1, parseCount(a, value()));
    else if (a == "--kernel")
      kernelName = value();
    else if (a == "--help" || a == "-h") {
      std::printf("usage: nf-run ARTIFACT --case DIR [--misalign] [--pad N] "
                  "[--graph]\n       nf-run ARTIFACT --bench --dims "
                  "B=..,S=..,D=..[,F=..,P=..] [--iters N] [--kernel K] "
                  "[--pad N]\n"
                  "       nf-run ARTIFACT --tune --dims "
                  "B=..,S=..,D=..[,F=..,P=..] [--iters N] [--kernel K]\n"
                  "--tune times every variant that serves the shapes, checks "
                  "its results against the default variant's, and records "
                  "the fastest for that D in ARTIFACT.tune, which the "
                  "runtime reads when it loads the artifact\n");
      return 0;
    } else if (artifactPath.empty())
      artifactPath = a;
    else
      die("unexpected argument '" + a + "'");
  }
  if (artifactPath.empty() || (caseDir.empty() && !bench && !tune))
    die("usage: nf-run ARTIFACT (--case DIR | --bench --dims ... | --tune "
        "--dims ...)");
  if (bench && tune)
    die("--bench and --tune are two modes: give one");
  if (pad && tune)
    die("--pad is for --case and --bench, not --tune");

  Artifact artifact;
  std::string error;
  if (!readArtifactFile(artifactPath, artifact, error))
    die(error);
  // The tune file is read first: a damaged one is refused even without a
  // GPU. --case checks the default variants; --bench times what the
  // runtime launches (the tuned variant where there is one).
  TuningTable tuning;
  if (Status s = readTuning(artifact, artifactPath, tuning); !s)
    die(s.message());
  std::unique_ptr<Module> module;
  if (Status s = Module::load(artifact, module); !s)
    die(s.message());
  if (bench)
    module->setTuning(std::move(tuning));
  const CudaDriver *cu = getCudaDriver(error);

  if (bench || tune) {
    if (artifact.kernels.empty())
      die("the artifact has no kernel");
    const KernelInfo *found = kernelName.empty()
                                  ? &artifact.kernels.front()
                                  : artifact.findKernel(kernelName);
    if (!found)
      die("the artifact has no kernel '" + kernelName + "'");
    std::map<std::string, std::string> dims = parseDims(dimsText);
    BenchInputs in = makeBenchInputs(cu, *found, dims, false, pad);
    if (tune)
      return runTune(cu, artifactPath, artifact, *module, *found, dims, in,
                     dimsText, iters);
    return runBench(cu, *module, *found, in, dimsText, iters);
  }
  // Correctness mode.
  return runCase(cu, artifact, *module, caseDir, pad, misalign, graph);
}
