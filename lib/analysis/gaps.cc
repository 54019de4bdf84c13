// SPDX-License-Identifier: MIT
#include "logrx/gaps.h"

#include <algorithm>
#include <cctype>
#include <re2/re2.h>
#include <unordered_map>

namespace logrx {
namespace {

const re2::RE2& problem_words() {
  static const re2::RE2 kWords(
      "(?i)\\b(?:errors?|warn(?:ing)?s?|exceptions?|tracebacks?|fail(?:ed|ure|s)?|fatal|"
      "not supported|unsupported|not compatible|incompatible|out of memory|oom|killed|abort(?:ed)?|"
      "time(?:d)? ?out|timeout|cannot|can't|unable|invalid|refused|denied|crash(?:ed)?|panic|"
      "segmentation fault|died|dead|deprecated|mismatch|exceed(?:s|ed)?)\\b",
      re2::RE2::Quiet);
  return kWords;
}

bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

struct GapCollector::Impl {
  std::size_t max_groups;
  std::unordered_map<std::string, GapGroup> groups;
  std::size_t overflow = 0;
};

GapCollector::GapCollector(std::size_t max_groups) : impl_(std::make_unique<Impl>()) {
  impl_->max_groups = max_groups;
}
GapCollector::~GapCollector() = default;
GapCollector::GapCollector(GapCollector&&) noexcept = default;
GapCollector& GapCollector::operator=(GapCollector&&) noexcept = default;

std::string GapCollector::mask(std::string_view m) {
  std::string out;
  std::size_t i = 0;
  while (i < m.size()) {
    char c = m[i];
    bool word_start = i == 0 || !is_word(m[i - 1]);
    if ((c == '\'' || c == '"') && m.find(c, i + 1) != std::string_view::npos) {
      out += c;
      out += "<str>";
      out += c;
      i = m.find(c, i + 1) + 1;
    } else if (c == '/' && (i == 0 || m[i - 1] == ' ' || m[i - 1] == '(' || m[i - 1] == '=') &&
               i + 1 < m.size() && is_word(m[i + 1])) {
      std::size_t end = i;
      while (end < m.size() && m[end] != ' ' && m[end] != ',' && m[end] != ')' && m[end] != '"' && m[end] != ':' &&
             m[end] != '\'')
        ++end;
      out += "<path>";
      i = end;
    } else if (word_start && c == '0' && i + 1 < m.size() && (m[i + 1] == 'x' || m[i + 1] == 'X')) {
      std::size_t end = i + 2;
      while (end < m.size() && std::isxdigit(static_cast<unsigned char>(m[end]))) ++end;
      out += "<hex>";
      i = end;
    } else if (word_start && std::isxdigit(static_cast<unsigned char>(c))) {
      // Long hex runs (ids, hashes) and numbers, but not words like "cafe".
      std::size_t end = i;
      bool digit = false;
      while (end < m.size() && std::isxdigit(static_cast<unsigned char>(m[end]))) {
        digit |= std::isdigit(static_cast<unsigned char>(m[end])) != 0;
        ++end;
      }
      bool whole = end == m.size() || !is_word(m[end]);
      if (digit && whole && end - i >= 8) {
        out += "<hex>";
        i = end;
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        end = i;
        while (end < m.size() && (std::isdigit(static_cast<unsigned char>(m[end])) || m[end] == '.' ||
                                  m[end] == ','))
          ++end;
        while (end > i && (m[end - 1] == '.' || m[end - 1] == ',')) --end;
        out += "<num>";
        i = end;
      } else {
        out += c;
        ++i;
      }
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

void GapCollector::add(const std::string& file, const LineEvent& event) {
  const std::string& m = event.message;
  if (m.empty() || m[0] == ' ' || m[0] == '\t') return;  // traceback frames and code
  if (m.rfind("Traceback (most recent call last)", 0) == 0) return;
  bool level = event.level == "WARNING" || event.level == "ERROR" || event.level == "CRITICAL";
  if (!level && !re2::RE2::PartialMatch(m, problem_words())) return;
  std::string pattern = mask(m);
  auto it = impl_->groups.find(pattern);
  if (it == impl_->groups.end()) {
    if (impl_->groups.size() >= impl_->max_groups) {
      ++impl_->overflow;
      return;
    }
    GapGroup group;
    group.pattern = pattern;
    group.example = event.text;
    group.file = file;
    group.line = event.line;
    it = impl_->groups.emplace(pattern, std::move(group)).first;
  }
  ++it->second.count;
}

std::vector<GapGroup> GapCollector::groups() const {
  std::vector<GapGroup> out;
  out.reserve(impl_->groups.size());
  for (const auto& [pattern, group] : impl_->groups) out.push_back(group);
  std::sort(out.begin(), out.end(), [](const GapGroup& a, const GapGroup& b) {
    return a.count != b.count ? a.count > b.count : a.pattern < b.pattern;
  });
  return out;
}

std::size_t GapCollector::overflow() const noexcept { return impl_->overflow; }

}  // namespace logrx
