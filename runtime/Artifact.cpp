//===- Artifact.cpp - reading nf-compile artifacts ------------------------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "runtime/Artifact.h"

#include <fstream>
#include <sstream>

using namespace nf::rt;

const char *nf::rt::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I8: return "i8";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  }
  return "?";
}

int nf::rt::dtypeBytes(DType dtype) {
  switch (dtype) {
  case DType::F32: case DType::I32: return 4;
  case DType::F16: case DType::BF16: return 2;
  case DType::I8: return 1;
  case DType::I64: return 8;
  }
  return 0;
}

bool nf::rt::parseDType(const std::string &text, DType &dtype) {
  static const std::pair<const char *, DType> names[] = {
      {"f32", DType::F32}, {"f16", DType::F16}, {"bf16", DType::BF16},
      {"i8", DType::I8},   {"i32", DType::I32}, {"i64", DType::I64}};
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
        pos + (size_t)size > text.size())
      return false;
    blob = text.substr(pos, size);
    pos += size + 1;
    return true;
  };

  std::string line;
  if (!nextLine(line) || line != "normfuse-artifact 1")
    return fail("not a normfuse artifact (expected 'normfuse-artifact 1')");
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
        return fail("truncated PTX");
    } else if (key == "cubin" && need(2)) {
      if (!readBlob(w[1], artifact.cubin))
        return fail("truncated cubin");
    } else if (!kernel) {
      return fail("'" + key + "' outside a kernel");
    } else if (key == "schedule" && need(10)) {
      int64_t t, r, c, n;
      if (!parseInt(w[3], t) || !parseInt(w[5], r) || !parseInt(w[7], c) ||
          !parseInt(w[9], n))
        return fail("malformed schedule");
      kernel->schedule = w[1];
      kernel->threadsPerRow = t;
      kernel->rowsPerCta = r;
      kernel->chunk = c;
      kernel->chunksPerThread = n;
    } else if (key == "block" && need(4)) {
      int64_t b, s;
      if (!parseInt(w[1], b) || !parseInt(w[3], s))
        return fail("malformed block");
      kernel->blockSize = b;
      kernel->sharedBytes = s;
    } else if (key == "row_length" && need(2)) {
      if (w[1] == "?")
        kernel->rowLength = -1;
      else if (!parseInt(w[1], kernel->rowLength))
        return fail("malformed row_length");
    } else if (key == "function" && need(3)) {
      (w[1] == "vectorized" ? kernel->vectorizedFunction
                            : kernel->generalFunction) = w[2];
    } else if (key == "chains" && need(2)) {
      int64_t n;
      if (!parseInt(w[1], n))
        return fail("malformed chains");
      kernel->numChains = n;
    } else if (key == "arg" && need(9)) {
      ArgumentInfo arg;
      arg.name = w[2];
      arg.isTensor = w[3] == "tensor";
      if (!parseDType(w[4], arg.dtype) || !parseShape(w[5], arg.shape))
        return fail("malformed argument");
      arg.role = w[6];
      arg.bcast = w[7];
      if (w[8] != "-") {
        std::stringstream ss(w[8]);
        for (std::string c; std::getline(ss, c, ',');)
          arg.chains.push_back(std::atoi(c.c_str()));
      }
      kernel->args.push_back(arg);
    } else if (key == "result" && need(8)) {
      ResultInfo result;
      int64_t chain;
      if (!parseDType(w[2], result.dtype) || !parseShape(w[3], result.shape) ||
          !parseInt(w[5], chain))
        return fail("malformed result");
      result.chain = chain;
      result.inPlace = w[7] == "-" ? -1 : std::atoi(w[7].c_str());
      kernel->results.push_back(result);
    } else if (key == "param" && need(6)) {
      ParamInfo param;
      int64_t index, dim;
      if (!parseInt(w[2], index) || !parseInt(w[3], dim))
        return fail("malformed param");
      param.kind = w[1];
      param.index = index;
      param.dim = dim;
      param.type = w[4];
      param.name = w[5];
      kernel->params.push_back(param);
    } else if (key == "end" && need(1)) {
      if (kernel->generalFunction.empty() || kernel->blockSize <= 0)
        return fail("kernel '" + kernel->name + "' is incomplete");
      kernel = nullptr;
    } else {
      return fail("unexpected '" + line + "'");
    }
  }
  if (artifact.ptx.empty() && artifact.cubin.empty())
    return fail("no PTX or cubin");
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
  return parseArtifact(buffer.str(), artifact, error);
}
