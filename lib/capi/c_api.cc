// SPDX-License-Identifier: MIT
// The C API: exceptions stop here, strings are malloc'd for any language.
#include "logrx/logrx.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "logrx/analyzer.h"
#include "logrx/budget.h"
#include "logrx/output.h"
#include "logrx/relaunch.h"
#include "logrx/version.h"

struct logrx_rulebook {
  logrx::Rulebook book;
};

struct logrx_analyzer {
  std::unique_ptr<logrx::Analyzer> analyzer;
  logrx_finding_callback callback = nullptr;
  void* user_data = nullptr;
  std::optional<logrx::Report> report;
  std::chrono::steady_clock::time_point last_input = std::chrono::steady_clock::now();
};

using json = nlohmann::json;

namespace {

char* copy_string(const std::string& text) {
  auto* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out == nullptr) return nullptr;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

void set_error(char** error, const std::string& message) {
  if (error != nullptr) *error = copy_string(message);
}

logrx_analyzer* make_analyzer(const logrx_rulebook& book, logrx::AnalyzerOptions options) {
  auto out = std::make_unique<logrx_analyzer>();
  out->analyzer = std::make_unique<logrx::Analyzer>(book.book, std::move(options));
  logrx_analyzer* raw = out.get();
  out->analyzer->on_finding([raw](const logrx::Finding& finding) {
    if (raw->callback == nullptr) return;
    std::string text = logrx::finding_to_json(finding);
    raw->callback(text.c_str(), raw->user_data);
  });
  return out.release();
}

// One key of logrx_analyzer_new_with_options; false for an unknown key or a
// value of the wrong type.
bool read_option(const std::string& key, const json& value, logrx::AnalyzerOptions& options) {
  auto text = [&value](std::string& out) {
    if (!value.is_string()) return false;
    out = value.get<std::string>();
    return true;
  };
  auto count = [&value](std::size_t& out) {
    if (!value.is_number_unsigned() || value.get<std::uint64_t>() == 0) return false;
    out = static_cast<std::size_t>(value.get<std::uint64_t>());
    return true;
  };
  if (key == "stream_name") return text(options.stream_name);
  if (key == "launch_command") return text(options.launch_command);
  if (key == "since") return text(options.since);
  if (key == "server") return text(options.server);
  if (key == "ready_pattern") return text(options.ready_pattern);
  if (key == "redact") {
    if (!value.is_boolean()) return false;
    options.redact = value.get<bool>();
    return true;
  }
  if (key == "file_mtime") {
    if (value.is_null()) return true;
    if (!value.is_number_integer()) return false;
    options.file_mtime = value.get<std::int64_t>();
    return true;
  }
  if (key == "year") {
    if (value.is_null()) return true;
    if (!value.is_number_integer() || value.get<std::int64_t>() < 1 || value.get<std::int64_t>() > 9999)
      return false;
    options.year = static_cast<int>(value.get<std::int64_t>());
    return true;
  }
  if (key == "max_findings") return count(options.max_findings);
  if (key == "max_line_bytes") return count(options.max_line_bytes);
  if (key == "max_runs") return count(options.max_runs);
  return false;
}

}  // namespace

extern "C" {

const char* logrx_version(void) { return LOGRX_VERSION; }

logrx_rulebook* logrx_rulebook_load(const char* const* dirs, size_t n_dirs, int include_builtin,
                                    char** error) {
  if (error != nullptr) *error = nullptr;
  try {
    std::vector<logrx::RuleSource> sources;
    if (include_builtin != 0) sources.push_back(logrx::builtin_rule_source());
    for (size_t i = 0; i < n_dirs; ++i)
      if (dirs != nullptr && dirs[i] != nullptr) sources.push_back({dirs[i]});
    if (sources.empty()) {
      set_error(error, "no rule sources");
      return nullptr;
    }
    logrx::Diagnostics problems;
    auto book = logrx::Rulebook::load(sources, problems);
    if (!book) {
      std::string message;
      for (const auto& d : problems) message += logrx::format_diagnostic(d) + "\n";
      set_error(error, message);
      return nullptr;
    }
    return new logrx_rulebook{std::move(*book)};
  } catch (const std::exception& e) {
    set_error(error, e.what());
  } catch (...) {
    set_error(error, "unknown error");
  }
  return nullptr;
}

void logrx_rulebook_free(logrx_rulebook* book) { delete book; }

char* logrx_builtin_rules_source(void) {
  try {
    return copy_string(logrx::builtin_rule_source().path);
  } catch (...) {
    return nullptr;
  }
}

size_t logrx_rulebook_size(const logrx_rulebook* book) {
  return book == nullptr ? 0 : book->book.size();
}

char* logrx_rulebook_rules(const logrx_rulebook* book) {
  if (book == nullptr) return nullptr;
  try {
    json list = json::array();
    for (const logrx::RuleSpec& rule : book->book.rules()) {
      list.push_back(json{{"id", rule.id},
                          {"severity", std::string(logrx::to_string(rule.severity))},
                          {"category", std::string(logrx::to_string(rule.category))},
                          {"servers", rule.servers},
                          {"title", rule.title},
                          {"file", rule.file}});
    }
    return copy_string(list.dump(-1, ' ', false, json::error_handler_t::replace));
  } catch (...) {
    return nullptr;
  }
}

logrx_analyzer* logrx_analyzer_new(const logrx_rulebook* book, const char* stream_name,
                                   const char* launch_command, char** error) {
  if (error != nullptr) *error = nullptr;
  if (book == nullptr) {
    set_error(error, "no rulebook");
    return nullptr;
  }
  try {
    logrx::AnalyzerOptions options;
    if (stream_name != nullptr) options.stream_name = stream_name;
    if (launch_command != nullptr) options.launch_command = launch_command;
    return make_analyzer(*book, std::move(options));
  } catch (const std::exception& e) {
    set_error(error, e.what());
  } catch (...) {
    set_error(error, "unknown error");
  }
  return nullptr;
}

logrx_analyzer* logrx_analyzer_new_with_options(const logrx_rulebook* book,
                                                const char* options_json, char** error) {
  if (error != nullptr) *error = nullptr;
  if (book == nullptr) {
    set_error(error, "no rulebook");
    return nullptr;
  }
  try {
    logrx::AnalyzerOptions options;
    if (options_json != nullptr && *options_json != '\0') {
      json given = json::parse(options_json);
      if (!given.is_object()) {
        set_error(error, "analyzer options are a JSON object");
        return nullptr;
      }
      for (const auto& [key, value] : given.items()) {
        if (!read_option(key, value, options)) {
          set_error(error, "bad analyzer option \"" + key + "\"");
          return nullptr;
        }
      }
    }
    return make_analyzer(*book, std::move(options));
  } catch (const std::exception& e) {
    set_error(error, e.what());
  } catch (...) {
    set_error(error, "unknown error");
  }
  return nullptr;
}

void logrx_analyzer_set_callback(logrx_analyzer* analyzer, logrx_finding_callback callback,
                                 void* user_data) {
  if (analyzer == nullptr) return;
  analyzer->callback = callback;
  analyzer->user_data = user_data;
}

int logrx_analyzer_feed(logrx_analyzer* analyzer, const char* data, size_t length) {
  if (analyzer == nullptr || analyzer->report || (data == nullptr && length > 0)) return -1;
  try {
    analyzer->last_input = std::chrono::steady_clock::now();
    analyzer->analyzer->feed(std::string_view(data == nullptr ? "" : data, length));
    return 0;
  } catch (...) {
    return -1;
  }
}

int logrx_analyzer_feed_all(logrx_analyzer* analyzer, const char* data, size_t length,
                            unsigned threads) {
  if (analyzer == nullptr || analyzer->report || (data == nullptr && length > 0)) return -1;
  try {
    analyzer->last_input = std::chrono::steady_clock::now();
    analyzer->analyzer->feed_all(std::string_view(data == nullptr ? "" : data, length), threads);
    return 0;
  } catch (...) {
    return -1;
  }
}

int logrx_analyzer_feed_line(logrx_analyzer* analyzer, const char* line, size_t length) {
  if (analyzer == nullptr || analyzer->report || (line == nullptr && length > 0)) return -1;
  try {
    analyzer->last_input = std::chrono::steady_clock::now();
    analyzer->analyzer->feed_line(std::string_view(line == nullptr ? "" : line, length));
    return 0;
  } catch (...) {
    return -1;
  }
}

int logrx_analyzer_note_exit(logrx_analyzer* analyzer) {
  if (analyzer == nullptr || analyzer->report) return -1;
  analyzer->analyzer->note_exit();
  return 0;
}

int logrx_analyzer_flush_idle(logrx_analyzer* analyzer) {
  if (analyzer == nullptr || analyzer->report) return -1;
  try {
    analyzer->analyzer->flush_idle();
    return 0;
  } catch (...) {
    return -1;
  }
}

int logrx_analyzer_poll(logrx_analyzer* analyzer, double quiet_seconds) {
  if (analyzer == nullptr || analyzer->report || !(quiet_seconds >= 0)) return -1;
  try {
    auto now = std::chrono::steady_clock::now();
    if (analyzer->last_input + std::chrono::duration<double>(quiet_seconds) > now) return 0;
    return analyzer->analyzer->poll(now + std::chrono::hours(24)) ? 1 : 0;
  } catch (...) {
    return -1;
  }
}

char* logrx_analyzer_finish(logrx_analyzer* analyzer) {
  if (analyzer == nullptr) return nullptr;
  try {
    if (!analyzer->report) analyzer->report = analyzer->analyzer->finish();
    return copy_string(logrx::to_json(*analyzer->report));
  } catch (...) {
    return nullptr;
  }
}

char* logrx_analyzer_budget(logrx_analyzer* analyzer) {
  if (analyzer == nullptr || !analyzer->report || analyzer->report->runs.empty()) return nullptr;
  try {
    logrx::MemoryBudget budget = logrx::compute_budget(analyzer->report->runs.back());
    budget.remediation = analyzer->report->remediation;
    return copy_string(logrx::budget_to_json(budget));
  } catch (...) {
    return nullptr;
  }
}

void logrx_analyzer_free(logrx_analyzer* analyzer) { delete analyzer; }

char* logrx_apply_remediation(const logrx_rulebook* book, const char* server, const char* remediation_json,
                              const char* const* argv, size_t argc, char** error) {
  if (book == nullptr || remediation_json == nullptr || (argv == nullptr && argc > 0) || argc == 0) {
    set_error(error, "logrx_apply_remediation: a rulebook, remediation JSON and a command are required");
    return nullptr;
  }
  try {
    using nlohmann::json;
    json doc = json::parse(remediation_json, nullptr, false);
    if (doc.is_object() && doc.contains("remediation")) doc = doc["remediation"];
    if (!doc.is_array()) {
      set_error(error, "logrx_apply_remediation: expected a report or a remediation array");
      return nullptr;
    }
    std::vector<logrx::RemediationItem> items;
    for (const json& entry : doc) {
      if (!entry.is_object()) continue;
      logrx::RemediationItem item;
      const char* key = entry.contains("flag")    ? "flag"
                        : entry.contains("env")     ? "env"
                        : entry.contains("container") ? "container"
                                                      : "param";
      if (!entry.contains(key) || !entry[key].is_string()) continue;
      item.kind = key[0] == 'f'   ? logrx::RemediationItem::Kind::Flag
                  : key[0] == 'e' ? logrx::RemediationItem::Kind::Env
                  : key[0] == 'c' ? logrx::RemediationItem::Kind::Container
                                  : logrx::RemediationItem::Kind::Param;
      item.name = entry[key].get<std::string>();
      if (entry.contains("value") && entry["value"].is_string()) item.value = entry["value"].get<std::string>();
      item.alternative = entry.value("alternative", false);
      item.applicable = entry.value("applicable", true);
      if (entry.contains("why") && entry["why"].is_string()) item.why = entry["why"].get<std::string>();
      if (entry.contains("note") && entry["note"].is_string()) item.note = entry["note"].get<std::string>();
      items.push_back(std::move(item));
    }
    logrx::LaunchCommand command;
    for (size_t i = 0; i < argc; ++i) command.argv.emplace_back(argv[i] == nullptr ? "" : argv[i]);
    std::string server_name = server != nullptr ? server : logrx::detect_server(command.argv);
    logrx::ApplyOutcome outcome = logrx::apply_remediation(book->book, server_name, items, command);
    if (!outcome.error.empty()) {
      set_error(error, outcome.error);
      return nullptr;
    }
    json out;
    out["changed"] = outcome.changed;
    out["argv"] = command.argv;
    out["env"] = command.env;
    out["applied"] = outcome.applied;
    out["skipped"] = outcome.skipped;
    out["command_line"] = logrx::command_line(command);
    return copy_string(out.dump());
  } catch (...) {
    set_error(error, "logrx_apply_remediation: out of memory");
    return nullptr;
  }
}

void logrx_free(void* pointer) { std::free(pointer); }

}  // extern "C"
