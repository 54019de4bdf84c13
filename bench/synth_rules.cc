// SPDX-License-Identifier: MIT
// Writes a rulebook N times the size of the built-in one, to show that the
// cost of a block no rule can match does not grow with the rule count:
//   synth_rules RULES_DIR OUT_DIR [TIMES]
// Every line rule is kept and copied TIMES - 1 times; each copy needs a
// literal of its own (a made-up word no log has) at the start of its message,
// so the copies add as many patterns and prefilter literals as the
// originals have, and never fire. Flag lists are copied as they are.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// "zqxj" and four letters from n: a word no log line contains.
std::string token(std::size_t n) {
  std::string word = "zqxj";
  for (int i = 0; i < 4; ++i) {
    word += static_cast<char>('a' + n % 26);
    n /= 26;
  }
  return word;
}

// The pattern, with `word` required right where the message starts.
std::string with_word(const std::string& pattern, const std::string& word) {
  std::size_t at = 0;
  if (pattern.compare(0, 4, "(?i)") == 0) at = 4;
  if (at < pattern.size() && pattern[at] == '^') ++at;
  return pattern.substr(0, at) + word + " " + pattern.substr(at);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: synth_rules RULES_DIR OUT_DIR [TIMES]\n";
    return 2;
  }
  fs::path in = argv[1];
  fs::path out = argv[2];
  int times = argc > 3 ? std::atoi(argv[3]) : 10;
  fs::remove_all(out);
  std::size_t serial = 0;
  std::size_t written = 0;
  for (const auto& entry : fs::recursive_directory_iterator(in)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream file(entry.path());
    std::stringstream text;
    text << file.rdbuf();
    json document = json::parse(text.str(), nullptr, true, /*ignore_comments=*/true);
    if (document.contains("rules")) {
      json rules = json::array();
      for (const json& rule : document["rules"]) {
        rules.push_back(rule);
        if (!rule.contains("pattern")) continue;
        for (int copy = 1; copy < times; ++copy) {
          json twin = rule;
          twin["id"] = rule["id"].get<std::string>() + ".synthetic" + std::to_string(copy);
          twin["pattern"] = with_word(rule["pattern"].get<std::string>(), token(serial++));
          rules.push_back(std::move(twin));
        }
      }
      written += rules.size();
      document["rules"] = std::move(rules);
    }
    fs::path target = out / fs::relative(entry.path(), in);
    fs::create_directories(target.parent_path());
    std::ofstream(target) << document.dump() << "\n";
  }
  std::printf("%zu rules\n", written);
  return 0;
}
