// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "logrx/rulebook.h"
#include "support/test_support.h"

using logrx::Diagnostics;
using logrx::Rulebook;
using logrx::test::rule_file;
using logrx::test::rule_json;
using logrx::test::TempDir;

namespace {

Diagnostics load_errors(const std::string& dir) {
  Diagnostics errors;
  auto book = Rulebook::load({{dir}}, errors);
  CHECK_FALSE(book.has_value());
  return errors;
}

const logrx::Diagnostic* find_code(const Diagnostics& errors, const std::string& code) {
  for (const auto& d : errors)
    if (d.code == code) return &d;
  return nullptr;
}

}  // namespace

TEST_CASE("Comments are allowed in rule files", "[rules][loader]") {
  TempDir dir;
  dir.write("a.json", "// header\n{ /* inline */ \"version\": 1,\n \"rules\": [" +
                          rule_json("a.one", "hello") + "] }\n");
  Diagnostics errors;
  auto book = Rulebook::load({{dir.path()}}, errors);
  REQUIRE(book.has_value());
  CHECK(book->size() == 1);
  CHECK(book->rules()[0].line == 3);
}

TEST_CASE("A JSON syntax error is reported with file, line and column", "[rules][loader]") {
  TempDir dir;
  std::string file = dir.write("bad.json", "{\n  \"rules\": [\n    { \"id\": \"a.b\", }\n  ]\n}\n");
  auto errors = load_errors(dir.path());
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].code == "rule.json-syntax");
  CHECK(errors[0].file == file);
  CHECK(errors[0].line == 3);
  CHECK(errors[0].column == 20);
  CHECK(logrx::format_diagnostic(errors[0]).find("bad.json:3:20: error[rule.json-syntax]") !=
        std::string::npos);
}

TEST_CASE("An empty rule file is an error, not an empty rulebook", "[rules][loader]") {
  TempDir dir;
  dir.write("empty.json", "");
  auto errors = load_errors(dir.path());
  REQUIRE_FALSE(errors.empty());
  CHECK(errors[0].code == "rule.json-syntax");
}

TEST_CASE("Every field problem of every rule is reported at once", "[rules][loader]") {
  TempDir dir;
  dir.write("r.json", rule_file(
      "{\"id\": \"Bad Id\", \"title\": 3, \"category\": \"memory\", \"severity\": \"worse\","
      " \"servers\": [\"nginx\"], \"pattern\": \"x\", \"explanation\": \"e\", \"remediation\": "
      "[{\"flag\": \"mem\"}, {\"env\": \"X\"}], \"examples\": {\"match\": [], \"no_match\": []},"
      " \"severty\": 1},\n"
      "{\"id\": \"ok.rule\"}"));
  auto errors = load_errors(dir.path());
  for (const char* code : {"rule.bad-id", "rule.wrong-type", "rule.bad-category",
                           "rule.bad-severity", "rule.unknown-server", "rule.bad-remediation",
                           "rule.unknown-field", "rule.missing-field"}) {
    INFO(code);
    CHECK(find_code(errors, code) != nullptr);
  }
  const auto* missing = find_code(errors, "rule.missing-field");
  REQUIRE(missing != nullptr);
  CHECK(missing->rule_id == "ok.rule");
  CHECK(missing->line == 2);
  const auto* typo = find_code(errors, "rule.unknown-field");
  REQUIRE(typo != nullptr);
  CHECK(typo->json_pointer == "/rules/0/severty");
}

TEST_CASE("Duplicate ids inside one source are errors", "[rules][loader]") {
  TempDir dir;
  dir.write("a.json", rule_file(rule_json("x.same", "a")));
  dir.write("b.json", rule_file(rule_json("x.same", "b")));
  auto errors = load_errors(dir.path());
  const auto* dup = find_code(errors, "rule.duplicate-id");
  REQUIRE(dup != nullptr);
  CHECK(dup->rule_id == "x.same");
}

TEST_CASE("A later source replaces a rule with the same id", "[rules][loader]") {
  TempDir builtin;
  TempDir user;
  builtin.write("a.json", rule_file(rule_json("x.same", "builtin") + "," + rule_json("x.other", "o")));
  user.write("a.json", rule_file(rule_json("x.same", "user")));
  Diagnostics errors;
  auto book = Rulebook::load({{builtin.path()}, {user.path()}}, errors);
  REQUIRE(book.has_value());
  CHECK(book->size() == 2);
  REQUIRE(book->find("x.same") != nullptr);
  CHECK(book->find("x.same")->pattern == "user");
}

TEST_CASE("A missing rule source is an error", "[rules][loader]") {
  auto errors = load_errors("/nonexistent/logrx/rules");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].code == "rule.source-missing");
}

TEST_CASE("The top level must be an object with a rules array", "[rules][loader]") {
  TempDir dir;
  dir.write("a.json", "[1, 2]");
  CHECK(find_code(load_errors(dir.path()), "rule.wrong-type") != nullptr);
  TempDir other;
  other.write("a.json", "{\"version\": 2, \"rules\": []}");
  CHECK(find_code(load_errors(other.path()), "rule.bad-version") != nullptr);
}

TEST_CASE("Regression: a JSON number that overflows is a diagnostic, not an abort",
          "[rules][loader][regression]") {
  // Found by fuzz_rule_loader: nlohmann throws out_of_range, not parse_error.
  TempDir dir;
  dir.write("big.json", "// Server\n{\"rules\": [], \"version\": 8e8788}\n");
  auto errors = load_errors(dir.path());
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].code == "rule.json-syntax");
  CHECK(errors[0].message.find("number overflow") != std::string::npos);
}
