//===- Tuning.cpp - variants chosen by measurement, per row length -------===//
//
// Part of normfuse. MLIR-free. A tune file records, for some row lengths D
// of an artifact's kernels, the variant that `nf-run --tune` measured
// fastest on the user's GPU; the runtime launches it instead of the first
// variant whose guard holds (docs/Artifact.md, "Tune files"). The file lives
// beside the artifact and names the artifact's digest: a rebuilt artifact
// (new digest) ignores the entries made for the old one.
//
//===----------------------------------------------------------------------===//

#include "runtime/Runtime.h"

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace nf::rt;

static const char kTuneHeader[] = "normfuse-tune 1";

/// The first entry of `list` (sorted by D) for rows of `d` or more elements.
static TunedVariants::const_iterator findEntry(const TunedVariants &list,
                                               int64_t d) {
  return std::lower_bound(list.begin(), list.end(), d,
                          [](const std::pair<int64_t, int> &e, int64_t key) {
                            return e.first < key;
                          });
}

int nf::rt::lookupTuned(const TunedVariants &list, int64_t d) {
  auto it = findEntry(list, d);
  return it != list.end() && it->first == d ? it->second : -1;
}

int TuningTable::lookup(size_t kernel, int64_t d) const {
  return kernel < entries.size() ? lookupTuned(entries[kernel], d) : -1;
}

void TuningTable::set(size_t kernel, int64_t d, int variant) {
  if (entries.size() <= kernel)
    entries.resize(kernel + 1);
  TunedVariants &list = entries[kernel];
  auto it = list.begin() + (findEntry(list, d) - list.begin());
  if (it != list.end() && it->first == d)
    it->second = variant;
  else
    list.insert(it, {d, variant});
}

std::string nf::rt::getTuneFilePath(const std::string &artifactPath) {
  return artifactPath + ".tune";
}

Status nf::rt::parseTuning(const Artifact &artifact, const std::string &text,
                           const std::string &path, TuningTable &table) {
  table = TuningTable();
  std::istringstream in(text);
  std::string line;
  int number = 0;
  auto error = [&](const std::string &what) {
    return Status::error("tune file '" + path + "' line " +
                         std::to_string(number) + ": " + what);
  };
  bool header = false, named = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#')
      continue;
    if (!header) {
      if (line != kTuneHeader)
        return error("not a normfuse tune file (expected '" +
                     std::string(kTuneHeader) + "')");
      header = true;
      continue;
    }
    std::istringstream words(line);
    std::string first, second, third, extra;
    words >> first >> second >> third;
    if (words >> extra)
      return error("expected three words at most, found more");
    if (!named) {
      if (first != "artifact" || second.empty() || !third.empty())
        return error("expected 'artifact <digest>'");
      named = true;
      // Made for another build of the artifact: its variants may differ.
      if (second != artifact.digest) {
        table = TuningTable();
        return Status();
      }
      continue;
    }
    if (third.empty())
      return error("expected '<kernel> <D> <function>'");
    size_t kernel = artifact.kernels.size();
    int variant = -1;
    for (size_t k = 0; k < artifact.kernels.size() && variant < 0; ++k) {
      if (artifact.kernels[k].name != first)
        continue;
      const std::vector<VariantInfo> &variants = artifact.kernels[k].variants;
      for (size_t v = 0; v < variants.size(); ++v)
        if (variants[v].function == third) {
          kernel = k;
          variant = (int)v;
        }
    }
    if (variant < 0)
      return error("the artifact has no function '" + third +
                   "' of a kernel '" + first + "'");
    int64_t d = 0;
    size_t used = 0;
    try {
      d = std::stoll(second, &used);
    } catch (...) {
      used = 0;
    }
    if (used != second.size() || d <= 0)
      return error("expected a positive row length, found '" + second + "'");
    table.set(kernel, d, variant);
  }
  if (!header)
    return error("empty tune file");
  if (!named)
    return error("no 'artifact <digest>' line");
  return Status();
}

Status nf::rt::readTuning(const Artifact &artifact,
                          const std::string &artifactPath, TuningTable &table) {
  table = TuningTable();
  std::string path = getTuneFilePath(artifactPath);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status(); // no tune file: the default variants
  std::ostringstream text;
  text << in.rdbuf();
  return parseTuning(artifact, text.str(), path, table);
}

std::string nf::rt::formatTuning(const Artifact &artifact,
                                 const TuningTable &table) {
  std::ostringstream out;
  out << kTuneHeader << "\n"
      << "# Variants nf-run --tune measured fastest: <kernel> <D> <function>\n"
      << "artifact " << artifact.digest << "\n";
  for (size_t k = 0; k < table.entries.size() && k < artifact.kernels.size();
       ++k)
    for (const auto &[d, v] : table.entries[k])
      out << artifact.kernels[k].name << " " << d << " "
          << artifact.kernels[k].variants[v].function << "\n";
  return out.str();
}
