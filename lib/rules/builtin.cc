// SPDX-License-Identifier: MIT
#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <filesystem>

#include "logrx/rulebook.h"

#ifndef LOGRX_RULES_FROM_BINDIR
#define LOGRX_RULES_FROM_BINDIR "../share/logrx/rules"
#endif
#ifndef LOGRX_RULES_FROM_LIBDIR
#define LOGRX_RULES_FROM_LIBDIR "../share/logrx/rules"
#endif

namespace logrx {

namespace {

// The file this code was loaded from: liblogrx.so for programs using the
// shared library (Python, C), the executable when it links the static one.
// Found from the code's own address, so it does not depend on argv[0], the
// working directory or which program loaded the library.
std::filesystem::path own_file() {
  Dl_info info{};
  link_map* map = nullptr;
  if (::dladdr1(reinterpret_cast<void*>(&builtin_rules_directory), &info,
                reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0)
    return {};
  std::error_code ec;
  // The main program's link map has an empty name (dladdr would give argv[0]).
  if (map == nullptr || map->l_name == nullptr || map->l_name[0] == '\0')
    return std::filesystem::read_symlink("/proc/self/exe", ec);
  std::filesystem::path file = std::filesystem::weakly_canonical(map->l_name, ec);
  return ec ? std::filesystem::path() : file;
}

}  // namespace

std::optional<std::string> builtin_rules_directory() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("LOGRX_BUILTIN_RULES"); env != nullptr && *env != '\0')
    return std::string(env);
  fs::path self = own_file();
  if (self.empty()) return std::nullopt;
  // An installed (or build-tree) rulebook next to the code: the library in
  // <prefix>/lib, the program in <prefix>/bin, each with its relative path
  // to <prefix>/share/logrx/rules.
  std::error_code ec;
  for (const char* relative : {LOGRX_RULES_FROM_LIBDIR, LOGRX_RULES_FROM_BINDIR}) {
    fs::path dir = self.parent_path() / relative;
    if (fs::is_directory(dir, ec)) return dir.lexically_normal().string();
  }
  return std::nullopt;
}

RuleSource builtin_rule_source() {
  if (auto dir = builtin_rules_directory()) return RuleSource{*dir, false};
  return RuleSource{"builtin:rules", true};
}

}  // namespace logrx
