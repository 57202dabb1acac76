//===- Ptxas.cpp - Running ptxas and reading what it reports --------------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "codegen/Ptxas.h"
#include "passes/Target.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::nf;
using namespace llvm;

std::string mlir::nf::getPtxasPath(StringRef cudaPath) {
  SmallString<256> ptxas(cudaPath);
  sys::path::append(ptxas, "bin", "ptxas");
  return std::string(ptxas);
}

LogicalResult mlir::nf::runPtxas(StringRef cudaPath, StringRef ptx,
                                 StringRef arch, bool verbose,
                                 std::string &cubinOut, std::string &log,
                                 int threads) {
  std::string ptxas = getPtxasPath(cudaPath);
  if (!sys::fs::can_execute(ptxas)) {
    log = "ptxas not found at '" + ptxas + "'";
    return failure();
  }
  SmallString<128> ptxPath, cubinPath, logPath;
  int fd;
  if (sys::fs::createTemporaryFile("nf", "ptx", fd, ptxPath) ||
      sys::fs::createTemporaryFile("nf", "cubin", cubinPath) ||
      sys::fs::createTemporaryFile("nf", "log", logPath)) {
    log = "cannot create temporary files for ptxas";
    return failure();
  }
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << ptx;
  }
  SmallVector<StringRef> args = {ptxas, "-arch", arch, "-o", cubinPath};
  if (verbose)
    args.push_back("-v");
  std::string threadCount = std::to_string(threads);
  if (threads != 1) {
    args.push_back("-split-compile");
    args.push_back(threadCount);
  }
  args.push_back(ptxPath);
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                          StringRef(logPath)};
  std::string execError;
  int rc = sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0,
                               &execError);
  if (auto buffer = MemoryBuffer::getFile(logPath))
    log = (*buffer)->getBuffer().str();
  if (rc == 0)
    if (auto buffer = MemoryBuffer::getFile(cubinPath, false, false))
      cubinOut = (*buffer)->getBuffer().str();
  sys::fs::remove(ptxPath);
  sys::fs::remove(cubinPath);
  sys::fs::remove(logPath);
  // A ptxas older than -split-compile rejects the option, not the PTX.
  if (rc != 0 && threads != 1 && StringRef(log).contains("split-compile"))
    return runPtxas(cudaPath, ptx, arch, verbose, cubinOut, log, 1);
  if (rc != 0) {
    if (!execError.empty())
      log += execError;
    return failure();
  }
  return success();
}

/// The number in front of `unit` in `text` ("8 bytes spill stores" ->
/// 8 for "bytes spill stores"), or 0.
static int64_t numberBefore(StringRef text, StringRef unit) {
  size_t at = text.find(unit);
  if (at == StringRef::npos)
    return 0;
  StringRef head = text.substr(0, at).rtrim();
  size_t start = head.find_last_not_of("0123456789");
  int64_t value = 0;
  head.substr(start == StringRef::npos ? 0 : start + 1).getAsInteger(10, value);
  return value;
}

SmallVector<PtxasFunctionInfo> mlir::nf::parsePtxasLog(StringRef log) {
  // Per function ptxas prints "Compiling entry function 'f' for 'sm_NN'",
  // "Function properties for f", "N bytes stack frame, N bytes spill
  // stores, N bytes spill loads" and "Used N registers, ...".
  SmallVector<PtxasFunctionInfo> functions;
  SmallVector<StringRef> lines;
  log.split(lines, '\n');
  std::optional<PtxasFunctionInfo> current;
  for (StringRef line : lines) {
    size_t at = line.find("Compiling entry function '");
    if (at != StringRef::npos) {
      current = PtxasFunctionInfo();
      current->name = line.substr(at + 26).split('\'').first.str();
      continue;
    }
    if (!current)
      continue;
    if (line.contains("spill stores")) {
      StringRef text = line.trim();
      if (text.consume_front("ptxas info"))
        text = text.ltrim(" :");
      current->stack = text.str();
      current->spillStores = numberBefore(text, "bytes spill stores");
      current->spillLoads = numberBefore(text, "bytes spill loads");
      continue;
    }
    at = line.find("Used ");
    if (at != StringRef::npos) {
      current->usage = line.substr(at).trim().str();
      current->registers = numberBefore(current->usage, "registers");
      functions.push_back(std::move(*current));
      current.reset();
    }
  }
  return functions;
}

StringMap<int64_t> mlir::nf::readMaxThreads(StringRef ptx) {
  StringMap<int64_t> result;
  std::string entry;
  SmallVector<StringRef> lines;
  ptx.split(lines, '\n');
  for (StringRef line : lines) {
    StringRef text = line.trim();
    // ".visible .entry name(" or ".entry name(".
    size_t at = text.find(".entry ");
    if (at != StringRef::npos) {
      entry = text.substr(at + 7).split('(').first.trim().str();
      continue;
    }
    int64_t threads;
    if (!entry.empty() && text.consume_front(".maxntid ") &&
        !text.split(',').first.trim().getAsInteger(10, threads)) {
      result[entry] = threads;
      entry.clear();
    }
  }
  return result;
}

namespace {
/// Where one `.entry` function lies in a PTX text (byte offsets).
struct EntrySpan {
  StringRef name;
  size_t begin = 0; ///< start of the `.entry` line
  size_t body = 0;  ///< start of the line that opens the body (`{`)
  size_t end = 0;   ///< just past the line that closes the body
};
} // namespace

/// The entry functions of `ptx`, in order. A function's body ends where its
/// braces balance again (inline assembly opens and closes blocks of its own,
/// some of them at the start of a line); `//` comments are skipped.
static SmallVector<EntrySpan> findEntries(StringRef ptx) {
  SmallVector<EntrySpan> entries;
  std::optional<EntrySpan> current;
  int depth = 0;
  size_t pos = 0;
  while (pos < ptx.size()) {
    size_t eol = ptx.find('\n', pos);
    size_t next = eol == StringRef::npos ? ptx.size() : eol + 1;
    StringRef line = ptx.slice(pos, next);
    StringRef code = line.split("//").first;
    if (!current) {
      // ".visible .entry name(" or ".entry name(".
      size_t at = code.find(".entry ");
      if (at != StringRef::npos) {
        current = EntrySpan();
        current->name = code.substr(at + 7).split('(').first.trim();
        current->begin = pos;
      }
    } else {
      for (char c : code) {
        if (c == '{') {
          if (depth++ == 0 && !current->body)
            current->body = pos;
        } else if (c == '}') {
          --depth;
        }
      }
      if (current->body && depth == 0) {
        current->end = next;
        entries.push_back(*current);
        current.reset();
      }
    }
    pos = next;
  }
  return entries;
}

LogicalResult mlir::nf::setMinCtasPerSm(std::string &ptx, StringRef name,
                                        int64_t ctas) {
  for (const EntrySpan &entry : findEntries(ptx)) {
    if (entry.name != name)
      continue;
    // The directives are the lines between the parameter list's `)` and
    // the body's `{`.
    size_t params = StringRef(ptx).substr(0, entry.body).rfind(")\n");
    if (params == StringRef::npos || params < entry.begin)
      return failure();
    size_t first = params + 2;
    SmallVector<std::string> directives;
    SmallVector<StringRef> lines;
    StringRef(ptx).slice(first, entry.body).split(lines, '\n', -1, false);
    size_t insertAt = 0;
    for (StringRef line : lines) {
      if (line.starts_with(".minnctapersm"))
        continue;
      directives.push_back(line.str());
      if (line.starts_with(".reqntid") || line.starts_with(".maxntid"))
        insertAt = directives.size();
    }
    if (ctas > 0)
      directives.insert(directives.begin() + insertAt,
                        ".minnctapersm " + std::to_string(ctas));
    std::string block;
    for (const std::string &line : directives)
      block += line + "\n";
    ptx.replace(first, entry.body - first, block);
    return success();
  }
  return failure();
}

std::string mlir::nf::selectEntries(StringRef ptx,
                                    const llvm::StringSet<> &keep) {
  std::string result;
  size_t pos = 0;
  for (const EntrySpan &entry : findEntries(ptx)) {
    result += ptx.slice(pos, entry.begin);
    if (keep.contains(entry.name))
      result += ptx.slice(entry.begin, entry.end);
    pos = entry.end;
  }
  result += ptx.substr(pos);
  return result;
}

int64_t mlir::nf::residentCtasPerSm(StringRef chip, int64_t registers,
                                    int64_t blockSize) {
  int64_t maxThreads = getTargetInfo(chip).maxThreadsPerSm;
  int64_t warpsPerCta = (blockSize + 31) / 32;
  int64_t perWarp = alignTo(std::max<int64_t>(registers, 1) * 32, 256);
  int64_t byRegisters = (65536 / perWarp) / warpsPerCta;
  int64_t byThreads = maxThreads / (warpsPerCta * 32);
  return std::max<int64_t>(1, std::min(byRegisters, byThreads));
}
