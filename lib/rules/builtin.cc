// SPDX-License-Identifier: MIT
#include <cstdlib>
#include <filesystem>

#include "logrx/rulebook.h"

#ifndef LOGRX_INSTALL_RULES_DIR
#define LOGRX_INSTALL_RULES_DIR ""
#endif

namespace logrx {

std::optional<std::string> builtin_rules_directory() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("LOGRX_BUILTIN_RULES"); env != nullptr && *env != '\0')
    return std::string(env);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path dir = exe.parent_path().parent_path() / "share" / "logrx" / "rules";
    if (fs::is_directory(dir, ec)) return dir.lexically_normal().string();
  }
  // A program that embeds the library lives elsewhere: use the prefix the
  // library was installed to.
  fs::path installed = LOGRX_INSTALL_RULES_DIR;
  if (!installed.empty() && fs::is_directory(installed, ec)) return installed.string();
  return std::nullopt;
}

}  // namespace logrx
