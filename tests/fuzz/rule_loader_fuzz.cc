// SPDX-License-Identifier: MIT
// Fuzzes rule-file loading and compilation: every input ends in a rulebook or
// in diagnostics, never in a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "logrx/rulebook.h"
#include "rules/rule_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  logrx::Diagnostics errors;
  logrx::detail::RuleFiles files;
  logrx::detail::parse_rule_file(input, "fuzz.json", files, errors);
  std::size_t before = errors.size();
  auto book = logrx::Rulebook::compile(std::move(files.rules), std::move(files.flags), errors);
  if (!book && errors.size() == before && before == 0) __builtin_trap();  // silent failure
  if (book) {
    auto report = logrx::test_examples(*book);
    (void)report;
  }
  for (const auto& d : errors) (void)logrx::format_diagnostic(d);
  return 0;
}
