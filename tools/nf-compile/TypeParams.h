//===- TypeParams.h - one IR file, several dtype combinations ---*- C++ -*-===//
//
// Part of normfuse. `nf-compile --types act=bf16,f16,f32 --types w=f32,act`
// builds every kernel of a file once per combination of its type
// parameters into one artifact. A type parameter is an MLIR type alias the
// file defines (`!act = bf16`): the file stays valid IR on its own (its
// defaults), and a combination is the file with the aliases' definitions
// set to other types, parsed again. No MLIR here: the text work only.
//
//===----------------------------------------------------------------------===//

#ifndef NF_TOOLS_NF_COMPILE_TYPEPARAMS_H
#define NF_TOOLS_NF_COMPILE_TYPEPARAMS_H

#include <string>
#include <utility>
#include <vector>

namespace nfc {

/// One combination: (parameter, type) in the order of the --types options.
using TypeCombination = std::vector<std::pair<std::string, std::string>>;

/// The combinations the --types options ask for: the product of their
/// lists, a value naming an earlier parameter taking that parameter's type,
/// duplicates (after that) removed, in order. Each option is NAME=V1,V2,...;
/// a type is f32, f16 or bf16. Returns false with a message in `error`.
bool expandTypeOptions(const std::vector<std::string> &options,
                       std::vector<TypeCombination> &combinations,
                       std::string &error);

/// `source` with the definition of each alias of `combination` (a line
/// `!NAME = <type>`) set to its type. Returns false with a message if the
/// file does not define one of them exactly once.
bool applyTypeCombination(const std::string &source,
                          const TypeCombination &combination,
                          std::string &result, std::string &error);

/// "act=bf16 w=f32": how artifacts and messages name a combination.
std::string describeCombination(const TypeCombination &combination);

} // namespace nfc

#endif // NF_TOOLS_NF_COMPILE_TYPEPARAMS_H
