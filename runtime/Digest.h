//===- Digest.h - the artifact's integrity digest ---------------*- C++ -*-===//
//
// Part of normfuse. MLIR-free and header-only: nf-compile (codegen/) writes
// the digest and the runtime checks it, with this one definition.
//
// The last line of an artifact is `digest fnv1a64 <16 hex digits>`, the
// 64-bit FNV-1a hash of every byte before that line. It catches what
// happens to files by accident (a copy cut short, a byte changed, two
// writers interleaved); it is not a signature and does not authenticate.
// FNV-1a because it is a few lines, needs no library and hashes a 5 MB
// artifact in a few milliseconds.
//
//===----------------------------------------------------------------------===//

#ifndef NF_RUNTIME_DIGEST_H
#define NF_RUNTIME_DIGEST_H

#include <cstdint>
#include <string>
#include <string_view>

namespace nf::rt {

inline uint64_t fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ull; // the FNV offset basis
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 0x100000001b3ull; // the FNV prime
  }
  return hash;
}

/// The artifact's last line for `body` (every byte before it).
inline std::string digestLine(std::string_view body) {
  static const char hex[] = "0123456789abcdef";
  uint64_t hash = fnv1a64(body);
  std::string line = "digest fnv1a64 ";
  for (int shift = 60; shift >= 0; shift -= 4)
    line += hex[(hash >> shift) & 0xf];
  return line + "\n";
}

} // namespace nf::rt

#endif // NF_RUNTIME_DIGEST_H
