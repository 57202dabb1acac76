//===- CaseMode.cpp - nf-run --case: a kernel against reference data ------===//
//
// Part of normfuse. Runs the kernel on the inputs nf-interp wrote to a case
// directory (manifest.txt names the files) and checks every output against
// the interpreter's, the guard bytes and row gaps around every buffer, the
// inputs not written in place, and with --graph a CUDA-graph replay.
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"
#include "NfRun.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace nf::rt;

namespace nfrun {
namespace {

int failures = 0;

std::vector<unsigned char> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    die("cannot read '" + path + "'");
  return std::vector<unsigned char>((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
}

Shape parseShapeText(const std::string &text) {
  Shape shape;
  if (text == "scalar")
    return shape;
  std::stringstream ss(text);
  for (std::string d; std::getline(ss, d, 'x');)
    shape.push_back(std::stoll(d));
  return shape;
}

struct ManifestEntry {
  std::string kernel, direction, name, dtype, shape, file;
};

std::vector<ManifestEntry> readManifest(const std::string &dir) {
  std::ifstream in(dir + "/manifest.txt");
  if (!in)
    die("no manifest.txt in '" + dir + "'");
  std::vector<ManifestEntry> entries;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream ss(line);
    ManifestEntry e;
    if (ss >> e.kernel >> e.direction >> e.name >> e.dtype >> e.shape >> e.file)
      entries.push_back(e);
  }
  return entries;
}

/// Compares one output with the reference and checks its guards/padding.
void checkOutput(const CudaDriver *cu, const std::string &label, Buffer &buf,
                 const std::vector<unsigned char> &ref) {
  std::vector<unsigned char> got(buf.allocBytes);
  checkCuda(cu, cu->cuMemcpyDtoH_v2(got.data(), buf.alloc, buf.allocBytes),
            "cuMemcpyDtoH");
  const Tensor &t = buf.tensor;
  int bytes = dtypeBytes(t.dtype);
  size_t base = t.data - buf.alloc;
  int64_t count = countElements(t);
  double diff = 0, norm = 0;
  int64_t unwritten = 0;
  std::vector<char> isElement(buf.allocBytes, 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t rem = e, off = 0;
    for (int i = t.rank - 1; i >= 0; --i) {
      off += (rem % t.shape[i]) * t.strides[i];
      rem /= t.shape[i];
    }
    size_t at = base + off * bytes;
    std::memset(&isElement[at], 1, bytes);
    double g = toDouble(&got[at], t.dtype);
    double r = toDouble(&ref[e * bytes], t.dtype);
    if (std::isnan(g) && !std::isnan(r))
      ++unwritten;
    diff += (g - r) * (g - r);
    norm += r * r;
  }
  int64_t stray = 0;
  for (size_t i = 0; i < buf.allocBytes; ++i)
    if (!isElement[i] && got[i] != buf.expected[i])
      ++stray;
  double err = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  double tol = t.dtype == DType::F32 ? 1e-5 : 1e-2;
  bool ok = !std::isnan(err) && err <= tol && unwritten == 0 && stray == 0;
  if (!ok)
    ++failures;
  std::printf("%s %s %s err=%.3e tol=%.0e unwritten=%lld stray_bytes=%lld\n",
              ok ? "PASS" : "FAIL", label.c_str(), dtypeName(t.dtype), err, tol,
              (long long)unwritten, (long long)stray);
}
} // namespace

int runCase(const CudaDriver *cu, const Artifact &artifact,
            const Module &module, const std::string &caseDir, int64_t pad,
            bool misalign, bool graph) {
  std::vector<ManifestEntry> manifest = readManifest(caseDir);
  if (manifest.empty())
    die("empty manifest in '" + caseDir + "'");
  std::string kname = manifest[0].kernel;
  const KernelInfo *k = artifact.findKernel(kname);
  if (!k)
    die("artifact has no kernel '" + kname + "'");
  std::map<std::string, const ManifestEntry *> inputs;
  std::vector<const ManifestEntry *> outputs(k->results.size(), nullptr);
  for (const ManifestEntry &e : manifest) {
    if (e.kernel != kname)
      continue;
    if (e.direction == "input")
      inputs[e.name] = &e;
    else {
      size_t r = std::stoul(e.name);
      if (r < outputs.size())
        outputs[r] = &e;
    }
  }
  std::vector<Buffer> argBuffers(k->args.size());
  std::vector<Value> args(k->args.size());
  for (size_t i = 0; i < k->args.size(); ++i) {
    const ArgumentInfo &info = k->args[i];
    auto it = inputs.find(info.name);
    if (it == inputs.end())
      die("case has no input '" + info.name + "'");
    std::vector<unsigned char> data =
        readFile(caseDir + "/" + it->second->file);
    args[i].isTensor = info.isTensor;
    if (!info.isTensor) {
      args[i].scalar = (int64_t)toDouble(data.data(), info.dtype);
      continue;
    }
    argBuffers[i] =
        makeBuffer(cu, info.dtype, parseShapeText(it->second->shape), &data,
                   pad, misalign);
    args[i].tensor = argBuffers[i].tensor;
  }
  std::vector<Buffer> resultBuffers(k->results.size());
  std::vector<Tensor> results(k->results.size());
  for (size_t r = 0; r < k->results.size(); ++r) {
    if (!outputs[r])
      die("case has no output " + std::to_string(r));
    if (k->results[r].inPlace >= 0) {
      results[r] = args[k->results[r].inPlace].tensor;
      continue;
    }
    resultBuffers[r] =
        makeBuffer(cu, k->results[r].dtype, parseShapeText(outputs[r]->shape),
                   nullptr, pad, misalign);
    results[r] = resultBuffers[r].tensor;
  }
  LaunchPlan plan;
  if (Status s = module.launch(kname.c_str(), args.data(), args.size(),
                               results.data(), results.size(), nullptr, &plan);
      !s)
    die(s.message());
  checkCuda(cu, cu->cuCtxSynchronize(), "kernel execution");
  std::string label = kname + " case=" + caseDir +
                      " variant=" + k->variants[plan.variant].function +
                      (misalign ? " misaligned" : "") +
                      (pad ? " pad=" + std::to_string(pad) : "");
  for (size_t r = 0; r < k->results.size(); ++r) {
    std::vector<unsigned char> ref = readFile(caseDir + "/" + outputs[r]->file);
    Buffer &buf = k->results[r].inPlace >= 0 ? argBuffers[k->results[r].inPlace]
                                             : resultBuffers[r];
    checkOutput(cu, label + " out" + std::to_string(r), buf, ref);
  }
  // Inputs not written in place must be unchanged, byte for byte.
  for (size_t i = 0; i < k->args.size(); ++i) {
    if (!k->args[i].isTensor)
      continue;
    bool written = false;
    for (const ResultInfo &r : k->results)
      written |= r.inPlace == (int)i;
    if (written)
      continue;
    std::vector<unsigned char> got(argBuffers[i].allocBytes);
    cu->cuMemcpyDtoH_v2(got.data(), argBuffers[i].alloc, got.size());
    if (got != argBuffers[i].expected) {
      ++failures;
      std::printf("FAIL %s input '%s' was modified\n", label.c_str(),
                  k->args[i].name.c_str());
    }
  }
  if (graph) {
    bool inPlace = false;
    for (const ResultInfo &r : k->results)
      inPlace |= r.inPlace >= 0;
    if (!inPlace) {
      // Capture two launches, replay, and require the same bytes.
      std::vector<std::vector<unsigned char>> before;
      for (Buffer &b : resultBuffers) {
        before.emplace_back(b.allocBytes);
        cu->cuMemcpyDtoH_v2(before.back().data(), b.alloc, b.allocBytes);
      }
      // Poison the outputs again so the replay has to write them.
      for (Buffer &b : resultBuffers)
        cu->cuMemcpyHtoD_v2(b.alloc, b.expected.data(), b.allocBytes);
      CUstream stream;
      checkCuda(cu, cu->cuStreamCreate(&stream, 0), "cuStreamCreate");
      checkCuda(cu, cu->cuStreamBeginCapture_v2(stream, 0), "begin capture");
      for (int rep = 0; rep < 2; ++rep)
        if (Status s = module.launch(kname.c_str(), args.data(), args.size(),
                                     results.data(), results.size(), stream);
            !s)
          die("launch during capture: " + s.message());
      void *g = nullptr, *exec = nullptr;
      checkCuda(cu, cu->cuStreamEndCapture(stream, &g), "end capture");
      checkCuda(cu, cu->cuGraphInstantiateWithFlags(&exec, g, 0),
                "graph instantiate");
      checkCuda(cu, cu->cuGraphLaunch(exec, stream), "graph launch");
      checkCuda(cu, cu->cuStreamSynchronize(stream), "graph replay");
      bool same = true;
      for (size_t r = 0; r < resultBuffers.size(); ++r) {
        std::vector<unsigned char> after(resultBuffers[r].allocBytes);
        cu->cuMemcpyDtoH_v2(after.data(), resultBuffers[r].alloc, after.size());
        same &= after == before[r];
      }
      if (!same)
        ++failures;
      std::printf("%s %s graph replay identical\n", same ? "PASS" : "FAIL",
                  label.c_str());
      cu->cuGraphExecDestroy(exec);
      cu->cuGraphDestroy(g);
      cu->cuStreamDestroy_v2(stream);
    }
  }
  for (Buffer &b : argBuffers)
    if (b.alloc)
      cu->cuMemFree_v2(b.alloc);
  for (Buffer &b : resultBuffers)
    if (b.alloc)
      cu->cuMemFree_v2(b.alloc);
  return failures ? 1 : 0;
}

} // namespace nfrun
