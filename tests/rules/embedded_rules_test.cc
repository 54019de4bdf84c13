// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "logrx/rulebook.h"
#include "rules/embedded_rules.h"
#include "rules/rule_loader.h"
#include "support/test_support.h"

using logrx::Diagnostics;
using logrx::Rulebook;
using logrx::RuleSource;

// The compiled-in rulebook is the source tree's rules/, rule for rule, with
// positions in the same files at the same places.
TEST_CASE("The embedded rulebook is the rules directory", "[rules][embedded]") {
  Diagnostics errors;
  auto embedded = Rulebook::load({RuleSource{"builtin:rules", true}}, errors);
  REQUIRE(errors.empty());
  REQUIRE(embedded.has_value());
  auto on_disk = Rulebook::load({{logrx::test::builtin_rules_dir()}}, errors);
  REQUIRE(errors.empty());
  REQUIRE(on_disk.has_value());
  REQUIRE(embedded->size() == on_disk->size());
  REQUIRE(embedded->server_flags().size() == on_disk->server_flags().size());
  std::string prefix(logrx::detail::kEmbeddedPrefix);
  for (std::size_t i = 0; i < embedded->size(); ++i) {
    const auto& a = embedded->rules()[i];
    const auto& b = on_disk->rules()[i];
    INFO(a.id << " " << a.file);
    REQUIRE(a.id == b.id);
    REQUIRE(a.pattern == b.pattern);
    REQUIRE(a.line == b.line);
    REQUIRE(a.column == b.column);
    // "builtin:rules/sglang/memory.json" for <source>/rules/sglang/memory.json.
    REQUIRE(a.file.rfind(prefix, 0) == 0);
    std::string relative = a.file.substr(prefix.size());
    REQUIRE(b.file.size() > relative.size());
    CHECK(b.file.compare(b.file.size() - relative.size(), relative.size(), relative) == 0);
  }
}

TEST_CASE("Positions inside embedded files are read from the embedded text", "[rules][embedded]") {
  std::string disk = logrx::test::builtin_rules_dir() + "/sglang/memory.json";
  auto expected = logrx::detail::position_in_file(disk, "/rules/1/pattern");
  REQUIRE(expected.has_value());
  auto got = logrx::detail::position_in_file("builtin:rules/sglang/memory.json", "/rules/1/pattern");
  REQUIRE(got.has_value());
  CHECK(*got == *expected);
  CHECK_FALSE(logrx::detail::embedded_rule_text("builtin:rules/no/such.json").has_value());
  CHECK_FALSE(logrx::detail::embedded_rule_text("sglang/memory.json").has_value());
}

TEST_CASE("The built-in source falls back to the embedded copy", "[rules][embedded]") {
  // Under ctest the test binary has no share/logrx/rules next to it unless the
  // environment names one; either way the source loads.
  RuleSource source = logrx::builtin_rule_source();
  Diagnostics errors;
  auto book = Rulebook::load({source}, errors);
  REQUIRE(errors.empty());
  REQUIRE(book.has_value());
  CHECK(book->find("sglang.memory.not-enough-memory") != nullptr);
}

// A rule directory whose file is a byte-for-byte copy of a built-in one takes
// that file's rule positions from the build; an edited copy is mapped again.
TEST_CASE("Copies of built-in files reuse their positions only while identical", "[rules][embedded]") {
  auto text = logrx::detail::embedded_rule_text("builtin:rules/sglang/memory.json");
  REQUIRE(text.has_value());
  logrx::test::TempDir identical;
  identical.write("sglang/memory.json", std::string(*text));
  logrx::test::TempDir edited;
  edited.write("sglang/memory.json", "\n\n" + std::string(*text));
  Diagnostics errors;
  auto same = logrx::detail::load_rule_source(identical.path() + "/", errors);
  auto moved = logrx::detail::load_rule_source(edited.path(), errors);
  REQUIRE(errors.empty());
  REQUIRE(same.rules.size() > 1);
  REQUIRE(same.rules.size() == moved.rules.size());
  Diagnostics ignored;
  auto mapped = logrx::detail::RuleFiles{};
  logrx::detail::parse_rule_file(*text, "memory.json", mapped, ignored);
  REQUIRE(mapped.rules.size() == same.rules.size());
  for (std::size_t i = 0; i < same.rules.size(); ++i) {
    INFO(same.rules[i].id);
    CHECK(same.rules[i].line == mapped.rules[i].line);
    CHECK(same.rules[i].column == mapped.rules[i].column);
    CHECK(moved.rules[i].line == mapped.rules[i].line + 2);
    CHECK(moved.rules[i].column == mapped.rules[i].column);
  }
}
