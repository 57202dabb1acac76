//===- TypeParams.cpp - one IR file, several dtype combinations -----------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "TypeParams.h"

#include <algorithm>
#include <cctype>
#include <sstream>

using namespace nfc;

static bool isTypeName(const std::string &text) {
  return text == "f32" || text == "f16" || text == "bf16";
}

static bool isIdentifier(const std::string &text) {
  if (text.empty() || std::isdigit((unsigned char)text[0]))
    return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum((unsigned char)c) || c == '_';
  });
}

bool nfc::expandTypeOptions(const std::vector<std::string> &options,
                            std::vector<TypeCombination> &combinations,
                            std::string &error) {
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> values;
  for (const std::string &option : options) {
    size_t eq = option.find('=');
    std::string name = option.substr(0, eq);
    if (eq == std::string::npos || !isIdentifier(name)) {
      error = "--types " + option +
              ": expected NAME=T1,T2,... (e.g. "
              "act=bf16,f16,f32)";
      return false;
    }
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      error = "--types " + option + ": parameter '" + name +
              "' is given twice; list all its types in one option";
      return false;
    }
    std::vector<std::string> list;
    std::stringstream ss(option.substr(eq + 1));
    for (std::string v; std::getline(ss, v, ',');) {
      bool earlier = std::find(names.begin(), names.end(), v) != names.end();
      if (!isTypeName(v) && !earlier) {
        error = "--types " + option + ": '" + v +
                "' is not f32, f16, bf16 or a parameter named before";
        return false;
      }
      if (std::find(list.begin(), list.end(), v) == list.end())
        list.push_back(v);
    }
    if (list.empty()) {
      error = "--types " + option + ": no type listed";
      return false;
    }
    names.push_back(name);
    values.push_back(list);
  }
  // The product, the first parameter varying slowest.
  combinations.clear();
  std::vector<size_t> index(names.size(), 0);
  if (names.empty())
    return true;
  while (true) {
    TypeCombination c;
    for (size_t p = 0; p < names.size(); ++p) {
      std::string v = values[p][index[p]];
      for (auto &[n, t] : c)
        if (n == v)
          v = t; // a parameter named before: its type in this combination
      c.emplace_back(names[p], v);
    }
    if (std::find(combinations.begin(), combinations.end(), c) ==
        combinations.end())
      combinations.push_back(c);
    size_t p = names.size();
    while (p > 0 && ++index[p - 1] == values[p - 1].size())
      index[--p] = 0;
    if (p == 0)
      break;
  }
  return true;
}

bool nfc::applyTypeCombination(const std::string &source,
                               const TypeCombination &combination,
                               std::string &result, std::string &error) {
  result = source;
  for (const auto &[name, type] : combination) {
    // A definition is a line `!NAME = <type>` (leading blanks allowed, a
    // trailing comment kept).
    size_t count = 0;
    size_t valueBegin = 0, valueEnd = 0;
    for (size_t pos = 0; pos < result.size();) {
      size_t end = result.find('\n', pos);
      if (end == std::string::npos)
        end = result.size();
      size_t i = pos;
      while (i < end && (result[i] == ' ' || result[i] == '\t'))
        ++i;
      std::string head = "!" + name;
      if (result.compare(i, head.size(), head) == 0) {
        size_t j = i + head.size();
        while (j < end && (result[j] == ' ' || result[j] == '\t'))
          ++j;
        if (j < end && result[j] == '=') {
          ++j;
          while (j < end && (result[j] == ' ' || result[j] == '\t'))
            ++j;
          size_t k = j;
          while (k < end && !std::isspace((unsigned char)result[k]) &&
                 result[k] != '/')
            ++k;
          valueBegin = j;
          valueEnd = k;
          ++count;
        }
      }
      pos = end + 1;
    }
    if (count != 1) {
      error = "--types " + name + "=...: the file " +
              std::string(count ? "defines" : "does not define") +
              " the type alias '!" + name + " = <type>'" +
              (count ? " more than once" : "") +
              "; a type parameter is such an alias, on a line of its own";
      return false;
    }
    result.replace(valueBegin, valueEnd - valueBegin, type);
  }
  return true;
}

std::string nfc::describeCombination(const TypeCombination &combination) {
  std::string text;
  for (const auto &[name, type] : combination)
    text += (text.empty() ? "" : " ") + name + "=" + type;
  return text;
}
