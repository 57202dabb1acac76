//===- Target.h - What the generator knows of each target SM ----*- C++ -*-===//
//
// Part of normfuse. Every fact about a target SM that a schedule, a
// lowering or the assembler step depends on, in one table (Target.cpp), so
// that supporting a new SM is one entry and no pass compares chip names.
//
//===----------------------------------------------------------------------===//

#ifndef NF_PASSES_TARGET_H
#define NF_PASSES_TARGET_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir::nf {

/// A persistent CTA's two slots are dynamic shared memory (more than the 48
/// KB a function may have statically): at most this many bytes on any
/// target (TargetInfo::maxPersistentStageBytes gives each target's).
constexpr int64_t kLargePersistentStageBytes = 200 * 1024;
constexpr int64_t kPersistentStageBytes = 96 * 1024;

struct TargetInfo {
  /// The compute capability times ten (sm_90a: 90); 0 where the chip is
  /// not named (nf-opt without a chip option), which turns every feature
  /// below off.
  unsigned sm = 0;
  /// Resident threads an SM holds (CUDA programming guide).
  int64_t maxThreadsPerSm = 2048;
  /// The most bytes a persistent CTA's two slots of dynamic shared memory
  /// may take: 200 KB within the 227 KB a CTA may have on sm_90 and sm_100,
  /// 96 KB within the 99 KB of sm_86, sm_89 and sm_120 (and elsewhere),
  /// leaving room for the exchanges' scratch.
  int64_t maxPersistentStageBytes = kPersistentStageBytes;
  /// PTX ISA features asked of LLVM beyond its default for the chip: 8.1
  /// for sm_90 and sm_90a (LLVM's defaults 7.8 and 8.0), whose cluster
  /// schedules use `st.async`.
  llvm::StringRef ptxFeatures;

  /// `cp.async` (staged and persistent rows).
  bool hasAsyncCopy() const { return sm >= 80; }
  /// Thread-block clusters, distributed shared memory, `st.async` and
  /// mbarrier transaction counts (cluster schedules).
  bool hasClusters() const { return sm >= 90; }
  /// f32 pairs converted to fp8 in one instruction
  /// (cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32) at the PTX version LLVM emits:
  /// sm_89 has it from PTX 8.1 only, above LLVM's version for sm_89, and
  /// takes the integer sequence.
  bool hasHardwareFp8() const { return sm >= 90; }
  /// `prefetch.global.L2`, which LLVM's NVPTX backend selects from sm_90 on
  /// only (nf-compile --sm sm_80 stopped with an LLVM ERROR).
  bool hasL2Prefetch() const { return sm >= 90; }
};

/// The targets nf-compile accepts.
llvm::ArrayRef<llvm::StringRef> getSupportedChips();

/// "unsupported target '<chip>'; expected one of: sm_75 ...": what
/// nf-compile and the passes that take a `chip` option say of a chip that
/// getSupportedChips does not list.
std::string getUnsupportedChipMessage(llvm::StringRef chip);

/// What the generator knows of `chip` (sm_XX or sm_XXa); a default
/// TargetInfo (no feature) for a chip it does not list.
TargetInfo getTargetInfo(llvm::StringRef chip);

} // namespace mlir::nf

#endif // NF_PASSES_TARGET_H
