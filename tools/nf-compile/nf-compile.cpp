//===- nf-compile.cpp - nf IR file in, kernel artifact out ----------------===//
//
// Part of normfuse. Compiles every nf.kernel of a file into PTX for one SM
// and writes an artifact (metadata + PTX + PyTorch fallback, + cubin on
// request) that the runtime loads; with --types, every kernel once per dtype
// combination (TypeParams.h). Every stage of the pipeline, and the
// fallback, can be printed instead.
//
//===----------------------------------------------------------------------===//

#include "TypeParams.h"
#include "codegen/Artifact.h"
#include "codegen/Codegen.h"
#include "codegen/Ptxas.h"
#include "codegen/TorchEmitter.h"
#include "dialect/NfOps.h"
#include "passes/Schedule.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <map>

using namespace mlir;
using namespace llvm;

static cl::OptionCategory category("nf-compile options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::init("-"), cl::cat(category));
static cl::opt<std::string>
    outputFile("o", cl::desc("Output file (artifact, or the --emit stage)"),
               cl::value_desc("file"), cl::init("-"), cl::cat(category));
static cl::opt<std::string>
    chip("sm",
         cl::desc("Target SM: sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, "
                  "sm_90a, sm_100, sm_100a, sm_103, sm_110, sm_120, "
                  "sm_120a, sm_121"),
         cl::init("sm_90"), cl::cat(category));
static cl::list<std::string>
    dims("dim",
         cl::desc("Fix a dynamic size at compile time, e.g. --dim D=1536 "
                  "(only D, the row length, changes the generated code). "
                  "Without it the artifact holds a family of variants, the "
                  "schedule a fixed D would get for every D, and the "
                  "runtime picks one per launch"),
         cl::value_desc("D=<n>"), cl::cat(category));
static cl::list<std::string> typeOptions(
    "types",
    cl::desc("Build every kernel for several dtypes into one artifact: "
             "--types NAME=T1,T2,... sets the type alias !NAME that the file "
             "defines on a line of its own (e.g. `!act = bf16`) to each "
             "listed type (f32, f16, bf16, or a parameter named before: "
             "--types act=bf16,f16,f32 --types w=f32,act); every "
             "combination is built, and the runtime launches the one whose "
             "dtypes the call's tensors have"),
    cl::value_desc("NAME=T1,T2,..."), cl::cat(category));
static cl::opt<std::string>
    emit("emit",
         cl::desc("What to write: artifact (default), ptx, torch (the "
                  "PyTorch fallback: Python source with one function per "
                  "kernel, needs no CUDA), or the IR after a stage: rows "
                  "(specialized, decomposed, scheduled nf), gpu (gpu.module), "
                  "nvvm (LLVM/NVVM dialects)"),
         cl::init("artifact"), cl::cat(category));
static cl::opt<std::string>
    cudaPath("cuda-path",
             cl::desc("CUDA toolkit root: libdevice for math, ptxas for "
                      "--cubin and --ptxas-info"),
             cl::init("/usr/local/cuda"), cl::cat(category));
static cl::opt<bool> cubin("cubin",
                           cl::desc("Also assemble the PTX with ptxas and "
                                    "put the cubin in the artifact"),
                           cl::cat(category));
static cl::opt<bool> ptxasInfo(
    "ptxas-info",
    cl::desc("Print per kernel: schedule, block size, shared memory, and "
             "registers and spills as ptxas reports them, and the lowering's "
             "flags of each variant (l2_prefetch, joint_rows, third_cta)"),
    cl::cat(category));
static cl::opt<bool> avoidSpillsOption(
    "avoid-spills",
    cl::desc("Assemble the PTX with ptxas (when --cuda-path has it) and, for "
             "each kernel ptxas spills registers of, reassemble it with "
             ".minnctapersm set to the occupancy ptxas chose (then one CTA "
             "fewer) until it does not spill; and ask for two CTAs per SM "
             "where a register-resident CTA of 512+ threads would be alone "
             "on its SM (kept if ptxas then spills at most 16 bytes, or at 512 "
             "threads outside clusters 64 bytes loaded back at most once), and "
             "for three where the lowering recomputed "
             "a LayerNorm-like 512 x 4 or 5 row for them (kept at most 16 "
             "bytes); and ask "
             "for one more CTA per SM where a kernel is within 8 registers "
             "of it, kept if ptxas then does not spill (a third CTA of 512 "
             "threads: at most 16 bytes), and for a third CTA of 512 threads "
             "from further away, kept if ptxas then does not spill; a "
             "variant of a family that spills at one CTA per SM is left out, "
             "unless persistent (not a short launch's twin) with at most 8 "
             "bytes of spill, stored and loaded back (default "
             "on; skipped "
             "without ptxas, an error if asked for explicitly)"),
    cl::init(true), cl::cat(category));
static cl::opt<int64_t>
    threadsPerRow("threads-per-row",
                  cl::desc("Force threads per row (power of two; any "
                           "forced schedule option gives a dynamic D one "
                           "schedule instead of the family; below 16 "
                           "threads with several chunks each, the "
                           "schedule's twin, peeled and general variants "
                           "take up to 16 threads of the same capacity; "
                           "fused add + RMSNorm's 8-byte twin of 64 x 2 "
                           "rows, a warp)"),
                  cl::init(0), cl::cat(category));
static cl::opt<int64_t> rowsPerCta("rows-per-cta",
                                   cl::desc("Force rows per CTA"), cl::init(0),
                                   cl::cat(category));
static cl::opt<int64_t> rowsPerThread(
    "rows-per-thread",
    cl::desc("Force the rows each thread holds at once, their loads issued "
             "together (register-resident schedules; 1 to 8; default: 2 "
             "for rows shorter than a warp, else 1)"),
    cl::init(0), cl::cat(category));
static cl::opt<bool>
    streaming("streaming",
              cl::desc("Force one streaming schedule (row re-read from "
                       "memory per reduction): for a static D instead of "
                       "registers, for a dynamic D instead of the family"),
              cl::cat(category));
static cl::opt<std::string> persistent(
    "persistent",
    cl::desc("Which register-resident schedules are persistent, their CTAs "
             "walking many rows of a batch entry, holding the operands that "
             "do not depend on the row in registers and copying the next "
             "row into shared memory meanwhile: auto (the default: kernels "
             "where a reduction waits on operands along the row, at every "
             "schedule; and the long 16-bit rows of some kernels of two "
             "reductions where measured faster, see docs/Rationale.md; "
             "other rows of 128 or 256 threads get a persistent twin that "
             "the runtime launches for short launches, at most 8 rows per "
             "resident CTA, 16 where a [B, S, D] input is read only after "
             "the reductions), all (every schedule that can) or none"),
    cl::value_desc("auto|all|none"), cl::init("auto"), cl::cat(category));

static cl::opt<int64_t> maxCluster(
    "max-cluster",
    cl::desc("Most CTAs of a thread-block cluster that share a row too long "
             "for one CTA's registers (1, 2, 4 or 8; default: 8 from sm_90 "
             "on, 1 before; 1: stream such rows with one CTA)"),
    cl::init(-1), cl::cat(category));

static int fail(const Twine &message) {
  errs() << "nf-compile: error: " << message << "\n";
  return 1;
}

/// One line per function: "  name: Used N registers, ...; <stack and
/// spills>", and the occupancy asked of ptxas where there was one.
static void printPtxasSummary(ArrayRef<nf::PtxasFunctionInfo> functions,
                              const StringMap<int64_t> &minCtasPerSm,
                              const llvm::StringSet<> &raised,
                              const llvm::StringSet<> &rounded,
                              raw_ostream &os) {
  for (const nf::PtxasFunctionInfo &f : functions) {
    os << "  " << f.name << ": " << f.usage << "; " << f.stack;
    auto hint = minCtasPerSm.find(f.name);
    if (hint != minCtasPerSm.end())
      os << "; .minnctapersm " << hint->getValue();
    if (raised.contains(f.name) && hint != minCtasPerSm.end())
      os << (hint->getValue() == 3 ? " (three" : " (two")
         << " CTAs per SM asked for)";
    if (rounded.contains(f.name))
      os << " (one more CTA per SM asked for)";
    os << "\n";
  }
}

/// Whether some variant of a kernel of `module` compiles to `function` and
/// satisfies `pred`.
static bool
anyVariant(ModuleOp module, StringRef function,
           llvm::function_ref<bool(nf::KernelOp, nf::VariantAttr)> pred) {
  bool found = false;
  module.walk([&](nf::KernelOp kernel) {
    auto variants = kernel->getAttrOfType<ArrayAttr>(nf::getVariantsAttrName());
    for (Attribute a : variants ? variants.getValue() : ArrayRef<Attribute>())
      if (auto v = dyn_cast<nf::VariantAttr>(a))
        found |= nf::getVariantFunctionName(kernel, v) == function &&
                 pred(kernel, v);
  });
  return found;
}

/// Whether -nf-materialize-variants leaves out `function` when asked
/// (nf::isDroppableVariant).
static bool isDroppable(ModuleOp module, StringRef function) {
  return anyVariant(module, function, nf::isDroppableVariant);
}

/// Whether `function` is the vectorized or peeled variant of a
/// register-resident schedule (its rows are read once, into registers).
static bool isRegisterResident(ModuleOp module, StringRef function) {
  return anyVariant(module, function, [](nf::KernelOp, nf::VariantAttr v) {
    return (v.getVectorized() || v.getPeeled()) &&
           nf::Schedule::fromAttr(v.getSchedule()).isRegisterResident();
  });
}

/// Whether `function` is a variant whose CTAs walk rows (persistent).
static bool isPersistentVariant(ModuleOp module, StringRef function) {
  return anyVariant(module, function, [](nf::KernelOp, nf::VariantAttr v) {
    return nf::Schedule::fromAttr(v.getSchedule()).persistent;
  });
}

/// Whether `function` is a short launch's persistent twin: a spill drops
/// it (the variant after it serves its launches, where one row per CTA
/// does not spill).
static bool isShortLaunchTwin(ModuleOp module, StringRef function) {
  return anyVariant(module, function, [](nf::KernelOp, nf::VariantAttr v) {
    return v.getMaxRowsPerCta() > 0;
  });
}

/// Whether `function` is a vectorized variant that recomputes its row
/// between reductions for a third CTA per SM (its `third_cta`, set by
/// -nf-materialize-variants from nf::recomputesForThirdCta).
static bool recomputesForThirdCta(ModuleOp module, StringRef function) {
  return anyVariant(module, function, [](nf::KernelOp, nf::VariantAttr v) {
    return v.getThirdCta();
  });
}

/// Whether `function` is a variant whose CTAs share rows in a cluster.
static bool isClusterVariant(ModuleOp module, StringRef function) {
  return anyVariant(module, function, [](nf::KernelOp, nf::VariantAttr v) {
    return v.getSchedule().getClusterSize() > 1;
  });
}

/// The most spill a CTA of 512+ threads raised to two or three per SM may
/// take.
static constexpr int64_t kRaisedSpillBytes = 16;

/// The most spill a CTA of exactly 512 threads (not in a cluster) raised
/// from one to two per SM may take, and how many bytes more than it stores
/// ptxas may load back (see avoidSpills).
static constexpr int64_t kSecondCtaSpillBytes = 64;
static constexpr int64_t kSecondCtaReloadBytes = 8;

/// The most spill a persistent variant alone on its SM may keep, in bytes
/// stored and in bytes loaded back each (a variant that spills more is
/// dropped from its family, as one that does not persist).
static constexpr int64_t kPersistentSpillBytes = 8;

/// --avoid-spills: ptxas, left to itself, may give up a few bytes of stack
/// to fit one more CTA per SM. For each function it spills, ask for the
/// occupancy it chose (.minnctapersm), with which it usually allocates the
/// same registers without spilling, then for one CTA fewer at a time. Gives
/// up (keeping the spill) at one CTA per SM or after a few rounds. Also asks
/// for two CTAs per SM where a register-resident CTA of 512 or more threads
/// would be alone on its SM, kept where ptxas then spills at most
/// kRaisedSpillBytes (or kSecondCtaSpillBytes, see below), and for one
/// more CTA per SM where a function is within 8 registers of it, kept where
/// ptxas then does not spill (a third CTA of 512 threads: at most
/// kRaisedSpillBytes), and for a third CTA of 512 threads from further
/// away, kept where ptxas then does not spill. A register-resident variant
/// of a family that spills even at one CTA per SM is dropped, unless it is
/// persistent and spills at most kPersistentSpillBytes.
///
/// A hint is a directive of the function's PTX, so a round that changes
/// hints edits `ptx` and assembles only the functions it changed (a family
/// has ~100 functions; recompiling and reassembling all of them per round
/// made this most of the compile time). A round that drops a variant
/// recompiles the module from `pristine`. `ptx` and `module` end as the
/// last round left them; where the rounds settled, `reportOut` holds
/// ptxas's report of every function of `ptx` (--ptxas-info prints it).
static LogicalResult
avoidSpills(ModuleOp pristine, OwningOpRef<ModuleOp> &module,
            nf::CodegenOptions &options, std::string &ptx,
            SmallVectorImpl<nf::PtxasFunctionInfo> &reportOut,
            llvm::StringSet<> &raised, llvm::StringSet<> &rounded) {
  llvm::StringSet<> notRaised;
  // Asked for a third CTA of 512 threads from more than one register
  // granule away: kept only without spill.
  llvm::StringSet<> beyondGranule;
  // Cluster variants asked for more CTAs per SM: how many ptxas chose.
  llvm::StringMap<int64_t> clusterNatural;
  // The hints and dropped variants `ptx` was made with; after a round that
  // changed hints only, the functions whose hint changed (ptxas allocates
  // each function on its own, so the others' reports stand).
  llvm::StringMap<int64_t> madeWith = options.minCtasPerSm;
  size_t dropsMadeWith = options.dropVariants.size();
  std::optional<llvm::StringSet<>> only;
  // What ptxas reported per function and hint (0: none): a hint taken back
  // needs no second assembly.
  llvm::StringMap<std::map<int64_t, nf::PtxasFunctionInfo>> reports;
  // The functions in the order ptxas last reported the whole module.
  SmallVector<std::string> order;
  // Twelve rounds: layernorm_modulate_quant_fp8's peeled 64 x 3 and 64 x 4
  // functions (sm_89, sm_100) step down one CTA per SM a round; after five
  // they kept 8 and 40 bytes, and once rsqrt's Newton step lost its range
  // test the 64 x 3 one on sm_89 still kept 8 after eight.
  for (int round = 0; round < 12; ++round) {
    std::string cubinData, log;
    SmallVector<nf::PtxasFunctionInfo> functions;
    llvm::StringSet<> toAssemble;
    if (only) {
      for (const auto &name : *only) {
        auto known =
            reports[name.getKey()].find(madeWith.lookup(name.getKey()));
        if (known != reports[name.getKey()].end())
          functions.push_back(known->second);
        else
          toAssemble.insert(name.getKey());
      }
    }
    if (!only || !toAssemble.empty()) {
      std::string assembled = only ? nf::selectEntries(ptx, toAssemble) : ptx;
      if (failed(nf::runPtxas(cudaPath, assembled, chip, /*verbose=*/true,
                              cubinData, log, /*threads=*/0)))
        return fail("ptxas rejected the PTX:\n" + log), failure();
      if (!only)
        order.clear();
      for (nf::PtxasFunctionInfo &f : nf::parsePtxasLog(log)) {
        if (!only)
          order.push_back(f.name);
        reports[f.name][madeWith.lookup(f.name)] = f;
        functions.push_back(std::move(f));
      }
    }
    StringMap<int64_t> blockSizes = nf::readMaxThreads(ptx);
    bool changed = false;
    for (const nf::PtxasFunctionInfo &f : functions) {
      if (!blockSizes.count(f.name))
        continue;
      // A CTA of 512 or more threads alone on its SM leaves the SM without
      // loads in flight while its rows reduce: ask for two per SM, kept
      // where ptxas then spills at most a word or two (measured: seed #1 at
      // D = 12288, 8 bytes of spill, 70% -> 91% of a copy; 112 bytes at
      // 16384, 77% -> 68%; docs/Rationale.md "Two CTAs of 512 threads"),
      // and for CTAs of 512 threads at most kSecondCtaSpillBytes where ptxas
      // loads each spilled word back about once (H200, 20 to 60 bytes: +1.9
      // to +17.7 points at 14 of 15 points, -1.5 at one; spill loads 12 to
      // 24 bytes above the stores, seed #1 with RMSNorm's 512 x 5 and 512 x
      // 8 and a quantizing twin, lost 2.9 to 12.6; docs/Rationale.md "A
      // second CTA of 512 threads with spill"). A third CTA stays at
      // kRaisedSpillBytes.
      if (raised.contains(f.name)) {
        bool second = options.minCtasPerSm.lookup(f.name) == 2 &&
                      blockSizes[f.name] == 512 &&
                      !isClusterVariant(*module, f.name);
        bool kept = f.spillStores <= kRaisedSpillBytes ||
                    (second && f.spillStores <= kSecondCtaSpillBytes &&
                     f.spillLoads <= f.spillStores + kSecondCtaReloadBytes);
        if (!kept) {
          options.minCtasPerSm.erase(f.name);
          raised.erase(f.name);
          notRaised.insert(f.name);
          changed = true;
        }
        continue;
      }
      // A row recomputed between its reductions for a third CTA of 512
      // threads per SM (LayerNorm 512 x 4 and 5; nf::recomputesForThirdCta):
      // ask for it, kept on the same terms (ptxas: 40 registers, 12 and 8
      // bytes of spill; H200 +2.7 to +6.9 points at D = 12800-20480).
      if (blockSizes[f.name] == 512 && !notRaised.contains(f.name) &&
          !options.minCtasPerSm.count(f.name) &&
          nf::residentCtasPerSm(chip, f.registers, 512) < 3 &&
          recomputesForThirdCta(*module, f.name)) {
        options.minCtasPerSm[f.name] = 3;
        raised.insert(f.name);
        changed = true;
        continue;
      }
      if (blockSizes[f.name] >= 512 && !notRaised.contains(f.name) &&
          !options.minCtasPerSm.count(f.name) &&
          nf::residentCtasPerSm(chip, f.registers, blockSizes[f.name]) == 1 &&
          isRegisterResident(*module, f.name)) {
        options.minCtasPerSm[f.name] = 2;
        raised.insert(f.name);
        changed = true;
        continue;
      }
      // A function within one register granule (8 per thread) of fitting
      // one more CTA per SM: ask for that CTA, kept only where ptxas then
      // allocates without spilling. Occupancy falls in steps, and a change
      // of code that adds a register or two must not take a step down
      // (measured: 48 -> 49 registers took a CTA of 256 threads from five
      // to four per SM and rmsnorm_quant_fp8 at D = 5120 from 79% to 74%;
      // docs/Rationale.md "Occupancy steps").
      if (rounded.contains(f.name)) {
        // A cluster variant asked for more than one CTA beyond what ptxas
        // chose by itself: one fewer, until it fits without spilling (no
        // example kernel spills: test/Codegen/examples-ptxas.test).
        bool cluster = clusterNatural.count(f.name);
        if (cluster && f.spills() &&
            options.minCtasPerSm[f.name] - 1 > clusterNatural[f.name]) {
          --options.minCtasPerSm[f.name];
          changed = true;
          continue;
        }
        // A third CTA of 512 threads is worth a few bytes of spill, on the
        // terms of the two-CTA request (measured, H200: rmsnorm_quant_fp8
        // 512 x 3, 4 bytes, +10 to +12 points at D = 11264-12288; seed #2
        // 512 x 4, 16 bytes, +5 to +7 at 14336-16384; softmax's odd rows,
        // +4 to +12). A fourth CTA of 512 is not: kept with 4 to 8 bytes,
        // fused add + RMSNorm and RMSNorm's twins lost 2.5 to 5; nor a
        // second of 1024 (16 bytes, fused add + RMSNorm at 65536: no
        // change). docs/Rationale.md "Occupancy steps".
        bool thirdCta = !cluster && blockSizes[f.name] == 512 &&
                        options.minCtasPerSm[f.name] == 3 &&
                        !beyondGranule.contains(f.name) &&
                        f.spillStores <= kRaisedSpillBytes;
        if (f.spills() && !thirdCta) {
          options.minCtasPerSm.erase(f.name);
          rounded.erase(f.name);
          notRaised.insert(f.name);
          changed = true;
        }
        continue;
      }
      if (!f.spills() && !notRaised.contains(f.name) &&
          !options.minCtasPerSm.count(f.name)) {
        int64_t block = blockSizes[f.name];
        int64_t ctas = nf::residentCtasPerSm(chip, f.registers, block);
        // A cluster variant's CTA waits for the others at every reduction:
        // ask for as many CTAs per SM as threads allow (ptxas gave 50
        // registers, two CTAs of 512 per SM, to the variants that the
        // one-CTA schedule of the same chunks fits in 32 with four).
        int64_t full = nf::residentCtasPerSm(chip, 1, block);
        if (isClusterVariant(*module, f.name) && full > ctas) {
          options.minCtasPerSm[f.name] = full;
          clusterNatural[f.name] = ctas;
          rounded.insert(f.name);
          changed = true;
          continue;
        }
        bool withinGranule =
            nf::residentCtasPerSm(chip, std::max<int64_t>(f.registers - 8, 1),
                                  block) > ctas;
        // A CTA of 512 threads two per SM: a third whatever the distance,
        // kept only where ptxas then does not spill. Two rows per SM leave
        // it short of loads in flight while they reduce, most where a row
        // fills its chunks partly (measured, H200: +1.2 to +12.8 points at
        // all 10 points where ptxas fitted the third CTA in 40 registers
        // without spill; where it spilled 4 to 20 bytes, 13 of 33 points
        // lost up to 20; docs/Rationale.md "Occupancy steps").
        bool thirdOf512 = block == 512 && ctas == 2;
        if (withinGranule || thirdOf512) {
          options.minCtasPerSm[f.name] = ctas + 1;
          rounded.insert(f.name);
          if (!withinGranule)
            beyondGranule.insert(f.name);
          changed = true;
          continue;
        }
      }
      if (!f.spills())
        continue;
      auto hint = options.minCtasPerSm.find(f.name);
      int64_t ctas =
          hint == options.minCtasPerSm.end()
              ? nf::residentCtasPerSm(chip, f.registers, blockSizes[f.name])
              : hint->getValue() - 1;
      if (ctas < 1) {
        // A persistent variant keeps a word or two: its CTA is alone on its
        // SM by its slots, not by its registers, and dropping it leaves its
        // rows to the half-chunk variant after it (measured, H200:
        // fused_add_rmsnorm_quant_i8's persistent 512 x 5, 4 bytes, 90.6-91.7%
        // of a copy at D = 16896-20480 where one row per CTA ran 86.6-87.5;
        // docs/Rationale.md "Persistent CTAs").
        if (isPersistentVariant(*module, f.name) &&
            !isShortLaunchTwin(*module, f.name) &&
            f.spillStores <= kPersistentSpillBytes &&
            f.spillLoads <= kPersistentSpillBytes)
          continue;
        // Spills even at one CTA per SM: a register-resident variant of a
        // family is left out (the next variant serves its rows); other
        // functions keep the spill.
        if (!llvm::is_contained(options.dropVariants, f.name)) {
          options.dropVariants.push_back(f.name);
          // Where the variant is dropped, its hint names no kernel; where
          // it cannot be (not in a family), the hint stays.
          if (isDroppable(*module, f.name))
            options.minCtasPerSm.erase(f.name);
          changed = true;
        }
        continue;
      }
      options.minCtasPerSm[f.name] = ctas;
      changed = true;
    }
    if (!changed) {
      for (const std::string &name : order)
        reportOut.push_back(reports[name][madeWith.lookup(name)]);
      return success();
    }
    // A hint only sets a directive of the function's PTX: edit it there.
    // Dropping a variant changes the module: compile it again.
    only.emplace();
    if (options.dropVariants.size() == dropsMadeWith) {
      llvm::StringSet<> names;
      for (const auto &hint : madeWith)
        names.insert(hint.getKey());
      for (const auto &hint : options.minCtasPerSm)
        names.insert(hint.getKey());
      for (const auto &name : names) {
        int64_t before = madeWith.lookup(name.getKey());
        int64_t after = options.minCtasPerSm.lookup(name.getKey());
        if (before == after)
          continue;
        if (failed(nf::setMinCtasPerSm(ptx, name.getKey(), after))) {
          only.reset();
          break;
        }
        only->insert(name.getKey());
      }
    } else {
      only.reset();
    }
    if (!only) {
      reports.clear();
      module = pristine.clone();
      FailureOr<std::string> next = nf::compileToPTX(*module, options);
      if (failed(next))
        return failure();
      ptx = std::move(*next);
    }
    madeWith = options.minCtasPerSm;
    dropsMadeWith = options.dropVariants.size();
  }
  return success();
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "nf-compile: compile nf kernels to PTX for one SM\n\n"
      "  nf-compile examples/fused_add_gate_norm.mlir --sm sm_90 "
      "--dim D=3840 -o k.nfa\n");

  nf::CodegenOptions options;
  options.chip = chip;
  options.cudaPath = cudaPath;
  options.threadsPerRow = threadsPerRow;
  options.rowsPerCta = rowsPerCta;
  options.rowsPerThread = rowsPerThread;
  options.streaming = streaming;
  if (persistent != "auto" && persistent != "all" && persistent != "none")
    return fail("--persistent=" + persistent + ": expected auto, all or none");
  options.persistent = persistent;
  options.maxCluster = maxCluster;
  for (StringRef dim : dims) {
    auto [name, value] = dim.split('=');
    int64_t size;
    if (name != "D")
      return fail("--dim " + dim + ": only D (the row length) can be fixed");
    if (value.getAsInteger(10, size) || size <= 0)
      return fail("--dim " + dim + ": expected D=<positive integer>");
    options.rowLength = size;
  }
  static const StringRef stages[] = {"artifact", "ptx", "torch",
                                     "rows",     "gpu", "nvvm"};
  if (!is_contained(stages, emit))
    return fail("unknown --emit '" + emit +
                "'; expected artifact, ptx, torch, rows, gpu or nvvm");
  if (emit != "artifact" && emit != "ptx" && emit != "torch")
    options.dumpStage = emit;
  std::string error;
  // The fallback needs neither the target nor the CUDA toolkit.
  if (emit != "torch" && failed(nf::validateCodegenOptions(options, error)))
    return fail(error);

  DialectRegistry registry;
  nf::registerCodegenDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics name the op; a dump of it in generic form helps nobody.
  context.printOpOnDiagnostic(false);

  std::vector<nfc::TypeCombination> combinations;
  if (!nfc::expandTypeOptions(
          std::vector<std::string>(typeOptions.begin(), typeOptions.end()),
          combinations, error))
    return fail(error);

  std::string openError;
  auto input = openInputFile(inputFile, &openError);
  if (!input)
    return fail(openError);
  auto sourceMgr = std::make_shared<SourceMgr>();
  SourceMgrDiagnosticHandler diagnostics(*sourceMgr, &context);
  OwningOpRef<ModuleOp> module;
  if (combinations.empty()) {
    sourceMgr->AddNewSourceBuffer(std::move(input), SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      return 1;
  } else {
    // One parse per combination (the file with its aliases set), merged
    // into one module: each kernel renamed <name>__<types>, with its public
    // name and combination as attributes the artifact writer reads.
    std::string source = input->getBuffer().str();
    for (const nfc::TypeCombination &combination : combinations) {
      std::string text;
      if (!nfc::applyTypeCombination(source, combination, text, error))
        return fail(error);
      // Its own source manager: a parse reads the manager's first buffer.
      auto partSource = std::make_shared<SourceMgr>();
      partSource->AddNewSourceBuffer(
          MemoryBuffer::getMemBufferCopy(text, input->getBufferIdentifier()),
          SMLoc());
      SourceMgrDiagnosticHandler partDiagnostics(*partSource, &context);
      std::string described = nfc::describeCombination(combination);
      OwningOpRef<ModuleOp> part =
          parseSourceFile<ModuleOp>(partSource, &context);
      if (!part)
        return fail("the IR is invalid with --types " + described);
      std::string suffix = "__";
      for (const auto &entry : combination)
        suffix += (suffix.size() > 2 ? "_" : "") + entry.second;
      for (nf::KernelOp kernel :
           llvm::make_early_inc_range(part->getOps<nf::KernelOp>())) {
        StringRef name = kernel.getSymName();
        kernel->setAttr(nf::getPublicNameAttrName(),
                        StringAttr::get(&context, name));
        kernel->setAttr(nf::getTypesAttrName(),
                        StringAttr::get(&context, described));
        kernel.setSymName((name + suffix).str());
        if (module)
          kernel->moveBefore(module->getBody(), module->getBody()->end());
      }
      if (!module)
        module = std::move(part);
    }
  }
  if (module->getOps<nf::KernelOp>().empty())
    return fail("'" + inputFile + "' contains no nf.kernel");

  // The fallback is made of the input before the pipeline changes the
  // module; the artifact carries it too. Its header names the input file
  // only, so that artifacts do not depend on where they were built.
  StringRef sourceName =
      inputFile == "-" ? StringRef("<stdin>") : sys::path::filename(inputFile);
  FailureOr<std::string> torchSource;
  if (emit == "torch" || emit == "artifact") {
    torchSource = nf::generateTorchFallback(*module, sourceName);
    if (failed(torchSource))
      return 1;
  }

  auto output = openOutputFile(outputFile, &openError);
  if (!output)
    return fail(openError);
  if (emit == "torch") {
    output->os() << *torchSource;
    output->keep();
    return 0;
  }

  // --avoid-spills: a first compile, with diagnostics held back (if it
  // fails, the compile below reports why), assembled by ptxas; the kernels
  // it spills get occupancy hints. Without a stage to print,
  // its result is the output.
  OwningOpRef<ModuleOp> pristine = module->clone();
  FailureOr<std::string> ptx = failure();
  // The cubin, assembled at the end where --cubin asks for one.
  std::string cubinData;
  // What ptxas reported per function, when the spill check has it.
  SmallVector<nf::PtxasFunctionInfo> report;
  // Functions --avoid-spills asked for two CTAs per SM, or one more CTA per
  // SM (not for a spill).
  llvm::StringSet<> raised, rounded;
  if (avoidSpillsOption) {
    std::string ptxasPath = nf::getPtxasPath(cudaPath);
    bool havePtxas = sys::fs::can_execute(ptxasPath);
    if (!havePtxas && avoidSpillsOption.getNumOccurrences())
      return fail("--avoid-spills needs ptxas, not found at '" + ptxasPath +
                  "'; pass --cuda-path");
    if (havePtxas) {
      OwningOpRef<ModuleOp> trial = pristine->clone();
      nf::CodegenOptions quiet = options;
      quiet.dumpStage.clear();
      FailureOr<std::string> trialPtx = failure();
      {
        ScopedDiagnosticHandler silence(&context,
                                        [](Diagnostic &) { return success(); });
        trialPtx = nf::compileToPTX(*trial, quiet);
      }
      if (succeeded(trialPtx)) {
        SmallVector<nf::PtxasFunctionInfo> trialReport;
        if (failed(avoidSpills(*pristine, trial, quiet, *trialPtx, trialReport,
                               raised, rounded)))
          return 1;
        options.minCtasPerSm = quiet.minCtasPerSm;
        if (options.dumpStage.empty()) {
          module = std::move(trial);
          ptx = std::move(trialPtx);
          report = std::move(trialReport);
        }
      }
    }
  }

  std::string stageDump;
  raw_string_ostream dumpStream(stageDump);
  if (failed(ptx))
    ptx = nf::compileToPTX(*module, options, &dumpStream);
  if (!options.dumpStage.empty()) {
    if (stageDump.empty())
      return 1;
    output->os() << stageDump;
    output->keep();
    return 0;
  }
  if (failed(ptx))
    return 1;

  // The spill check assembled on several threads, whose cubin is not the
  // same from run to run: the artifact's cubin is assembled here, on one.
  bool needReport = ptxasInfo && report.empty();
  if (cubin || needReport) {
    std::string log;
    if (failed(nf::runPtxas(cudaPath, *ptx, chip, needReport, cubinData, log)))
      return fail("ptxas rejected the PTX:\n" + log);
    if (needReport)
      report = nf::parsePtxasLog(log);
  }
  if (ptxasInfo) {
    nf::printKernelSummary(*module, outs());
    printPtxasSummary(report, options.minCtasPerSm, raised, rounded, outs());
  }
  if (emit == "ptx")
    output->os() << *ptx;
  else if (failed(nf::writeArtifact(*module, chip, *ptx, *torchSource,
                                    cubin ? std::optional<StringRef>(cubinData)
                                          : std::nullopt,
                                    output->os())))
    return 1;
  output->keep();
  return 0;
}
