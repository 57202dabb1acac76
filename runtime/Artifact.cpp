//===- Artifact.cpp - reading nf-compile artifacts ------------------------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "runtime/Artifact.h"
#include "runtime/Digest.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>

using namespace nf::rt;

const char *nf::rt::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I8:
    return "i8";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::F8E4M3FN:
    return "f8E4M3FN";
  case DType::F8E5M2:
    return "f8E5M2";
  }
  return "?";
}

int nf::rt::dtypeBytes(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I8:
  case DType::F8E4M3FN:
  case DType::F8E5M2:
    return 1;
  case DType::I64:
    return 8;
  }
  return 0;
}

bool nf::rt::parseDType(const std::string &text, DType &dtype) {
  static const std::pair<const char *, DType> names[] = {
      {"f32", DType::F32},           {"f16", DType::F16},
      {"bf16", DType::BF16},         {"i8", DType::I8},
      {"i32", DType::I32},           {"i64", DType::I64},
      {"f8E4M3FN", DType::F8E4M3FN}, {"f8E5M2", DType::F8E5M2}};
  for (auto &[name, value] : names)
    if (text == name) {
      dtype = value;
      return true;
    }
  return false;
}

const KernelInfo *Artifact::findKernel(const std::string &name) const {
  for (const KernelInfo &kernel : kernels)
    if (kernel.name == name)
      return &kernel;
  return nullptr;
}

static bool parseShape(const std::string &text, Shape &shape) {
  shape.clear();
  if (text == "-")
    return true;
  std::stringstream ss(text);
  std::string dim;
  while (std::getline(ss, dim, 'x')) {
    if (dim == "?") {
      shape.push_back(-1);
      continue;
    }
    try {
      size_t used = 0;
      long long v = std::stoll(dim, &used);
      if (used != dim.size() || v < 0)
        return false;
      shape.push_back(v);
    } catch (...) {
      return false;
    }
  }
  return true;
}

static bool parseInt(const std::string &text, int64_t &value) {
  try {
    size_t used = 0;
    value = std::stoll(text, &used);
    return used == text.size();
  } catch (...) {
    return false;
  }
}

/// An int field: a number that fits in 32 bits.
static bool parseInt(const std::string &text, int &value) {
  int64_t wide;
  if (!parseInt(text, wide) || wide < INT32_MIN || wide > INT32_MAX)
    return false;
  value = (int)wide;
  return true;
}

/// What the launch code relies on: a schedule it can divide by, every
/// index (chain, argument, result, dimension) in range, and parameters of
/// the artifact's `format`. Empty if sound.
static std::string checkKernel(const KernelInfo &k, int format) {
  if (k.variants.empty())
    return "no variant";
  for (const VariantInfo &v : k.variants) {
    if (v.threadsPerRow <= 0 || v.rowsPerCta <= 0 || v.chunk <= 0 ||
        v.chunksPerThread < 0 || v.blockSize <= 0 || v.blockSize > 1024 ||
        v.sharedBytes < 0 || v.dynamicSharedBytes < 0 ||
        v.dynamicSharedBytes > kMaxDynamicSharedBytes || v.maxD < 0 ||
        v.clusterSize < 1 || v.clusterSize > 8 ||
        (v.clusterSize & (v.clusterSize - 1)) != 0 ||
        (v.clusterSize > 1 && (v.rowsPerCta != 1 || v.chunksPerThread == 0)))
      return "variant '" + v.function + "' has a malformed schedule";
    // A register-resident variant is wrong, not slow, past its capacity
    // (saturated: four 32-bit fields need not multiply within 64 bits).
    int64_t rowThreads = (int64_t)v.threadsPerRow * v.clusterSize,
            perThread = (int64_t)v.chunksPerThread * v.chunk;
    int64_t capacity =
        perThread > INT64_MAX / rowThreads ? INT64_MAX : rowThreads * perThread;
    if (capacity > 0 && (v.maxD == 0 || v.maxD > capacity))
      return "variant '" + v.function + "' holds rows of at most " +
             std::to_string(capacity) + " elements but max_d is " +
             std::to_string(v.maxD);
    // A peeled row may start chunk - 1 elements past an aligned address.
    if (v.peeled &&
        (v.chunk < 2 || (v.chunk & (v.chunk - 1)) != 0 || capacity == 0 ||
         v.clusterSize != 1 || v.maxD > capacity - v.chunk + 1))
      return "variant '" + v.function +
             "' is peeled but its schedule cannot hold its rows (a "
             "register-resident schedule of power-of-two chunks, max_d at "
             "most its capacity - chunk + 1)";
    // A short launch's twin walks rows: a persistent vectorized variant.
    if (v.maxRowsPerCta < 0 ||
        (v.maxRowsPerCta > 0 && (!v.vectorized || v.schedule != "persistent")))
      return "variant '" + v.function + "' has max_rows_per_cta " +
             std::to_string(v.maxRowsPerCta) +
             ", which only a persistent vectorized variant may have (>= 0)";
  }
  // Every launch a vectorized or peeled variant serves must have a general
  // one for other alignments: the longest general bound covers the longest
  // of the others (0: any D).
  auto longest = [&](bool vectorized) {
    int64_t most = -1;
    for (const VariantInfo &v : k.variants)
      if (vectorized ? v.vectorized || v.peeled : !v.vectorized && !v.peeled)
        most = v.maxD == 0 || most == 0 ? 0 : std::max(most, v.maxD);
    return most;
  };
  int64_t general = longest(false), vectorized = longest(true);
  if (general < 0 || (general > 0 && (vectorized == 0 || vectorized > general)))
    return "no general variant serves every row length the vectorized ones "
           "do";
  if (k.numChains < 0)
    return "malformed chains";
  for (const ArgumentInfo &arg : k.args)
    for (int chain : arg.chains)
      if (chain >= k.numChains)
        return "argument '" + arg.name + "' names chain " +
               std::to_string(chain) + " of " + std::to_string(k.numChains);
  for (size_t r = 0; r < k.results.size(); ++r) {
    const ResultInfo &result = k.results[r];
    if (result.chain < 0 || result.chain >= k.numChains)
      return "result " + std::to_string(r) + " names chain " +
             std::to_string(result.chain) + " of " +
             std::to_string(k.numChains);
    // [B, S, D] rows, or [B, S]: one value per row.
    if (result.shape.size() != 3 && result.shape.size() != 2)
      return "result " + std::to_string(r) + " is neither [B, S, D] nor [B, S]";
    if (result.group != 0 &&
        (result.group < 1 || (result.group & (result.group - 1)) != 0 ||
         result.shape.size() != 3 || result.dtype != DType::F32 ||
         result.inPlace >= 0))
      return "result " + std::to_string(r) + " has group " +
             std::to_string(result.group) +
             ": group results are [B, S, D / G] f32 tensors, G a power of "
             "two, not written in place";
    if (result.inPlace >= (int)k.args.size() ||
        (result.inPlace >= 0 && !k.args[result.inPlace].isTensor))
      return "result " + std::to_string(r) + " is in place into argument " +
             std::to_string(result.inPlace) + ", not a tensor argument";
  }
  for (const ParamInfo &p : k.params) {
    // Format 10 introduced this kind: no nf-compile wrote it under an
    // older header.
    if (p.kind == "chain_s_divisor" && format < 10)
      return "parameter '" + p.name + "' (chain_s_divisor) is format 10's, " +
             "not format " + std::to_string(format) + "'s";
    // Negative indices are refused before the tests below index with them.
    bool ok = p.index >= 0 && p.dim >= 0;
    if (p.kind == "arg_ptr")
      ok = ok && p.index < (int)k.args.size() && k.args[p.index].isTensor;
    else if (p.kind == "arg_stride" || p.kind == "cache_rows")
      ok = ok && p.index < (int)k.args.size() && k.args[p.index].isTensor &&
           p.dim < (int)k.args[p.index].shape.size();
    else if (p.kind == "arg_scalar")
      ok = ok && p.index < (int)k.args.size() && !k.args[p.index].isTensor;
    else if (p.kind == "result_ptr" || p.kind == "result_stride")
      // A [B, S] result has one stride parameter (dim 0), [B, S, D] two.
      ok = ok && p.index < (int)k.results.size() &&
           p.dim < (int)k.results[p.index].shape.size();
    else if (p.kind == "chain_rows" || p.kind == "chain_s" ||
             p.kind == "chain_f" || p.kind == "chain_s_divisor")
      ok = ok && p.index < k.numChains;
    else if (p.kind != "row_length")
      return "unknown parameter kind '" + p.kind + "'";
    if (!ok)
      return "parameter '" + p.name + "' (" + p.kind + " " +
             std::to_string(p.index) + " " + std::to_string(p.dim) +
             ") is out of range";
  }
  return "";
}

/// Why `firstLine` is not the header of a format this runtime reads; empty
/// if it is, with its number in `format`.
static std::string checkHeader(const std::string &firstLine, int &format) {
  const std::string header =
      "normfuse-artifact " + std::to_string(kArtifactFormat);
  if (firstLine.rfind("normfuse-artifact ", 0) != 0)
    return "not a normfuse artifact (expected '" + header + "')";
  for (int f = kOldestArtifactFormat; f <= kArtifactFormat; ++f)
    if (firstLine == "normfuse-artifact " + std::to_string(f)) {
      format = f;
      return "";
    }
  return "artifact format '" + firstLine.substr(18) +
         "' is not one this runtime reads (" +
         std::to_string(kOldestArtifactFormat) + " to " +
         std::to_string(kArtifactFormat) +
         "); recompile it with this version's nf-compile";
}

bool nf::rt::parseArtifact(const std::string &text, Artifact &artifact,
                           std::string &error) {
  artifact = Artifact();
  size_t pos = 0;
  int lineNo = 0;
  auto fail = [&](const std::string &message) {
    error = "artifact line " + std::to_string(lineNo) + ": " + message;
    return false;
  };
  auto nextLine = [&](std::string &line) {
    if (pos >= text.size())
      return false;
    size_t end = text.find('\n', pos);
    if (end == std::string::npos)
      end = text.size();
    line = text.substr(pos, end - pos);
    pos = end + 1;
    ++lineNo;
    return true;
  };
  auto readBlob = [&](const std::string &sizeText, std::string &blob) {
    int64_t size;
    if (!parseInt(sizeText, size) || size < 0 ||
        (size_t)size > text.size() - std::min(pos, text.size()))
      return false;
    // The blob ends with the newline the writer adds (or the file).
    if (pos + size < text.size() && text[pos + size] != '\n')
      return false;
    blob = text.substr(pos, size);
    pos += size + 1;
    // Keep counting the lines of the file: the blob's own and its newline.
    lineNo += std::count(blob.begin(), blob.end(), '\n') + 1;
    return true;
  };

  std::string line;
  nextLine(line);
  if (std::string problem = checkHeader(line, artifact.format);
      !problem.empty())
    return fail(problem);
  KernelInfo *kernel = nullptr;
  while (nextLine(line)) {
    std::istringstream in(line);
    std::vector<std::string> w;
    for (std::string word; in >> word;)
      w.push_back(word);
    if (w.empty())
      continue;
    const std::string &key = w[0];
    auto need = [&](size_t n) { return w.size() == n; };
    if (key == "target" && need(2)) {
      artifact.target = w[1];
    } else if (key == "kernel" && need(2)) {
      artifact.kernels.emplace_back();
      kernel = &artifact.kernels.back();
      kernel->name = w[1];
    } else if (key == "ptx" && need(2)) {
      if (!readBlob(w[1], artifact.ptx))
        return fail("truncated PTX (or a size that does not match it)");
    } else if (key == "torch" && need(2)) {
      // Optional: older artifacts have no fallback.
      if (!readBlob(w[1], artifact.torchSource))
        return fail("truncated PyTorch fallback (or a size that does not "
                    "match it)");
    } else if (key == "cubin" && need(2)) {
      if (!readBlob(w[1], artifact.cubin))
        return fail("truncated cubin (or a size that does not match it)");
    } else if (!kernel) {
      return fail("'" + key + "' outside a kernel");
    } else if (key == "variant" && need(artifact.format >= 9   ? 25
                                        : artifact.format >= 8 ? 23
                                        : artifact.format >= 6 ? 21
                                                               : 19)) {
      // variant <function> vectorized|peeled|general max_d <n>
      //   schedule <kind> threads_per_row <n> rows_per_cta <n> chunk <n>
      //   chunks_per_thread <n> block <n> shared <n> cluster <n>
      //   dynamic_shared <n> max_rows_per_cta <n>
      //   (format 5: without cluster; before format 7: no peeled; before
      //   format 8: no dynamic_shared; before format 9: no
      //   max_rows_per_cta)
      VariantInfo v;
      v.function = w[1];
      v.vectorized = w[2] == "vectorized";
      v.peeled = w[2] == "peeled";
      v.schedule = w[6];
      static const char *const keys[] = {
          "max_d", "schedule",          "threads_per_row", "rows_per_cta",
          "chunk", "chunks_per_thread", "block",           "shared"};
      bool ok = w[2] == "vectorized" || w[2] == "general" ||
                (v.peeled && artifact.format >= 7);
      for (int i = 0; i < 8; ++i)
        ok = ok && w[3 + 2 * i] == keys[i];
      if (!ok || !parseInt(w[4], v.maxD) || !parseInt(w[8], v.threadsPerRow) ||
          !parseInt(w[10], v.rowsPerCta) || !parseInt(w[12], v.chunk) ||
          !parseInt(w[14], v.chunksPerThread) ||
          !parseInt(w[16], v.blockSize) || !parseInt(w[18], v.sharedBytes) ||
          (artifact.format >= 6 &&
           (w[19] != "cluster" || !parseInt(w[20], v.clusterSize))) ||
          (artifact.format >= 8 && (w[21] != "dynamic_shared" ||
                                    !parseInt(w[22], v.dynamicSharedBytes))) ||
          (artifact.format >= 9 &&
           (w[23] != "max_rows_per_cta" || !parseInt(w[24], v.maxRowsPerCta))))
        return fail("malformed variant");
      kernel->variants.push_back(v);
    } else if (key == "symbol" && need(2)) {
      kernel->symbol = w[1];
    } else if (key == "types" && w.size() >= 2) {
      kernel->types = line.substr(line.find("types") + 6);
    } else if (key == "row_length" && need(2)) {
      if (w[1] == "?")
        kernel->rowLength = -1;
      else if (!parseInt(w[1], kernel->rowLength))
        return fail("malformed row_length");
    } else if (key == "row_multiple" && need(2)) {
      if (!parseInt(w[1], kernel->rowMultiple) || kernel->rowMultiple < 1 ||
          (kernel->rowMultiple & (kernel->rowMultiple - 1)) != 0)
        return fail("malformed row_multiple (a power of two)");
    } else if (key == "chains" && need(2)) {
      if (!parseInt(w[1], kernel->numChains))
        return fail("malformed chains");
    } else if (key == "arg" && need(9)) {
      ArgumentInfo arg;
      arg.name = w[2];
      arg.isTensor = w[3] == "tensor";
      if ((w[3] != "tensor" && w[3] != "scalar") ||
          !parseDType(w[4], arg.dtype) || !parseShape(w[5], arg.shape))
        return fail("malformed argument");
      arg.role = w[6];
      arg.bcast = w[7];
      if (w[8] != "-") {
        std::stringstream ss(w[8]);
        for (std::string c; std::getline(ss, c, ',');) {
          int chain;
          if (!parseInt(c, chain) || chain < 0)
            return fail("malformed argument chains '" + w[8] + "'");
          arg.chains.push_back(chain);
        }
      }
      kernel->args.push_back(arg);
    } else if (key == "result" && need(10)) {
      ResultInfo result;
      if (!parseDType(w[2], result.dtype) || !parseShape(w[3], result.shape) ||
          !parseInt(w[5], result.chain) ||
          (w[7] != "-" && !parseInt(w[7], result.inPlace)) || w[8] != "group" ||
          (w[9] != "-" && (!parseInt(w[9], result.group) || result.group < 1)))
        return fail("malformed result");
      kernel->results.push_back(result);
    } else if (key == "param" && need(6)) {
      ParamInfo param;
      if (!parseInt(w[2], param.index) || !parseInt(w[3], param.dim))
        return fail("malformed param");
      param.kind = w[1];
      param.type = w[4];
      param.name = w[5];
      kernel->params.push_back(param);
    } else if (key == "end" && need(1)) {
      if (std::string problem = checkKernel(*kernel, artifact.format);
          !problem.empty())
        return fail("kernel '" + kernel->name + "': " + problem);
      // Several kernels of one name only as the combinations of a --types
      // build: each with its own, and the same arguments and results.
      for (const KernelInfo &other : artifact.kernels)
        if (&other != kernel && other.name == kernel->name &&
            (kernel->types.empty() || other.types == kernel->types ||
             other.args.size() != kernel->args.size() ||
             other.results.size() != kernel->results.size()))
          return fail("kernel '" + kernel->name +
                      "' appears twice, not as two dtype combinations of "
                      "one kernel");
      kernel = nullptr;
    } else {
      return fail("unexpected '" + line + "'");
    }
  }
  if (kernel)
    return fail("kernel '" + kernel->name + "' has no 'end'");
  if (artifact.ptx.empty() && artifact.cubin.empty())
    return fail("no PTX or cubin");
  return true;
}

bool nf::rt::parseArtifactFile(const std::string &bytes, Artifact &artifact,
                               std::string &error) {
  artifact = Artifact();
  // The header first: a file of another format has no digest to check.
  int format = 0;
  if (std::string problem =
          checkHeader(bytes.substr(0, bytes.find('\n')), format);
      !problem.empty()) {
    error = "artifact line 1: " + problem;
    return false;
  }
  // The digest line is the last one; a file cut anywhere loses it or
  // leaves a prefix whose hash differs.
  static const std::string key = "\ndigest fnv1a64 ";
  size_t at = bytes.rfind(key);
  constexpr size_t kLineSize = 15 + 16 + 1;
  if (at == std::string::npos || bytes.size() - (at + 1) != kLineSize ||
      bytes.back() != '\n') {
    error = "artifact has no digest line at its end: the file is cut short, "
            "or was written by an nf-compile older than format 3; recompile "
            "it";
    return false;
  }
  std::string_view body(bytes.data(), at + 1);
  std::string expected = digestLine(body);
  if (bytes.compare(at + 1, std::string::npos, expected) != 0) {
    error = "artifact digest mismatch: the file was changed or damaged after "
            "nf-compile wrote it (its content hashes to " +
            expected.substr(15, 16) + ", its digest line says " +
            bytes.substr(at + 16, 16) + "); recompile it";
    return false;
  }
  if (!parseArtifact(std::string(body), artifact, error))
    return false;
  artifact.digest = expected.substr(15, 16);
  return true;
}

bool nf::rt::readArtifactFile(const std::string &path, Artifact &artifact,
                              std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open artifact '" + path + "'";
    return false;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (parseArtifactFile(buffer.str(), artifact, error))
    return true;
  error = "'" + path + "': " + error;
  return false;
}
