//===- ArtifactJson.cpp - an artifact's metadata as JSON ------------------===//
//
// Part of normfuse. The one description of a parsed artifact that other
// languages read (the Python package, through nf_artifact_describe), so that
// runtime/Artifact.cpp stays the only parser of the file.
//
//===----------------------------------------------------------------------===//

#include "runtime/Artifact.h"

#include <cstdio>

using namespace nf::rt;

namespace {
/// Appends JSON text; just what the metadata needs (strings, integers,
/// booleans, arrays and objects written in order).
class JsonWriter {
public:
  std::string text;

  void string(const std::string &value) {
    text += '"';
    for (unsigned char c : value) {
      if (c == '"' || c == '\\') {
        text += '\\';
        text += static_cast<char>(c);
      } else if (c == '\n') {
        text += "\\n";
      } else if (c < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
        text += escaped;
      } else {
        // UTF-8 passes through: JSON text is UTF-8.
        text += static_cast<char>(c);
      }
    }
    text += '"';
  }
  void key(const char *name) {
    comma();
    string(name);
    text += ':';
    fresh = true;
  }
  void value(const std::string &v) {
    comma();
    string(v);
  }
  void value(int64_t v) {
    comma();
    text += std::to_string(v);
  }
  void boolean(bool v) {
    comma();
    text += v ? "true" : "false";
  }
  void open(char bracket) {
    comma();
    text += bracket;
    fresh = true;
  }
  void close(char bracket) {
    text += bracket;
    fresh = false;
  }
  template <typename T> void field(const char *name, const T &v) {
    key(name);
    value(v);
  }
  void ints(const char *name, const std::vector<int64_t> &values) {
    key(name);
    open('[');
    for (int64_t v : values)
      value(v);
    close(']');
  }

private:
  // No comma before the first element of an array or object, nor after a
  // key.
  bool fresh = true;
  void comma() {
    if (!fresh)
      text += ',';
    fresh = false;
  }
};
} // namespace

std::string nf::rt::describeArtifact(const Artifact &artifact) {
  JsonWriter w;
  w.open('{');
  w.field("format", int64_t(artifact.format));
  w.field("digest", artifact.digest);
  w.field("target", artifact.target);
  w.key("has_cubin");
  w.boolean(!artifact.cubin.empty());
  w.key("torch_source");
  if (artifact.torchSource.empty())
    w.text += "null";
  else
    w.value(artifact.torchSource);
  w.key("kernels");
  w.open('[');
  for (const KernelInfo &k : artifact.kernels) {
    w.open('{');
    w.field("name", k.name);
    w.field("symbol", k.symbol.empty() ? k.name : k.symbol);
    w.field("types", k.types);
    w.field("row_length", k.rowLength);
    w.field("row_multiple", k.rowMultiple);
    w.field("num_chains", int64_t(k.numChains));
    w.key("args");
    w.open('[');
    for (size_t i = 0; i < k.args.size(); ++i) {
      const ArgumentInfo &a = k.args[i];
      w.open('{');
      w.field("index", int64_t(i));
      w.field("name", a.name);
      w.key("is_tensor");
      w.boolean(a.isTensor);
      w.field("dtype", std::string(dtypeName(a.dtype)));
      w.ints("shape", a.shape);
      w.field("role", a.role);
      w.field("bcast", a.bcast);
      w.ints("chains", std::vector<int64_t>(a.chains.begin(), a.chains.end()));
      w.close('}');
    }
    w.close(']');
    w.key("results");
    w.open('[');
    for (size_t i = 0; i < k.results.size(); ++i) {
      const ResultInfo &r = k.results[i];
      w.open('{');
      w.field("index", int64_t(i));
      w.field("dtype", std::string(dtypeName(r.dtype)));
      w.ints("shape", r.shape);
      w.field("chain", int64_t(r.chain));
      w.field("in_place", int64_t(r.inPlace));
      w.field("group", r.group);
      w.close('}');
    }
    w.close(']');
    w.key("variants");
    w.open('[');
    for (const VariantInfo &v : k.variants) {
      w.open('{');
      w.field("function", v.function);
      w.key("vectorized");
      w.boolean(v.vectorized);
      w.key("peeled");
      w.boolean(v.peeled);
      w.field("max_d", v.maxD);
      w.field("schedule", v.schedule);
      w.field("threads_per_row", int64_t(v.threadsPerRow));
      w.field("rows_per_cta", int64_t(v.rowsPerCta));
      w.field("chunk", int64_t(v.chunk));
      w.field("chunks_per_thread", int64_t(v.chunksPerThread));
      w.field("block", int64_t(v.blockSize));
      w.field("shared", int64_t(v.sharedBytes));
      w.field("dynamic_shared", int64_t(v.dynamicSharedBytes));
      w.field("cluster", int64_t(v.clusterSize));
      w.field("max_rows_per_cta", v.maxRowsPerCta);
      w.close('}');
    }
    w.close(']');
    w.close('}');
  }
  w.close(']');
  w.close('}');
  return w.text;
}
