// SPDX-License-Identifier: MIT
// Scores logrx against labelled real logs (corpus/real/README.md): each case
// is NAME.log with a manifest NAME.json saying what the thread established.
#include "eval.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "logrx/analyzer.h"
#include "logrx/output.h"

namespace logrx::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Case {
  std::string name;      // path of the manifest without .json
  std::string log_path;
  std::string server;
  std::string category;
  std::vector<std::string> fix;  // names only ("--max-model-len", "VLLM_USE_V1", "num_ctx")
  bool healthy = false;
  bool wrapper = false;
  std::string confidence;
};

struct Outcome {
  const Case* spec = nullptr;
  std::string predicted = "info";
  std::string rule;  // strongest finding's rule, "" when none
  std::string tier;
  bool category_ok = false;
  bool fix_ok = false;          // meaningful when spec->fix is not empty
  std::vector<std::string> prescribed;
  bool alarm = false;           // error or fatal finding (healthy cases)
  std::string alarm_rule;
};

// "--max-model-len 32768" -> "--max-model-len"; "VLLM_USE_V1=0" -> "VLLM_USE_V1".
std::string fix_name(const std::string& fix) {
  std::size_t end = fix.find_first_of(" =");
  return fix.substr(0, end);
}

bool read_case(const fs::path& manifest, Case& out, std::string& error) {
  std::ifstream in(manifest);
  json doc = json::parse(in, nullptr, false, true);
  if (doc.is_discarded() || !doc.is_object()) {
    error = "not a JSON object";
    return false;
  }
  fs::path log = manifest;
  log.replace_extension(".log");
  if (!fs::exists(log)) {
    error = "no " + log.filename().string() + " beside it";
    return false;
  }
  out.name = (manifest.parent_path() / manifest.stem()).string();
  out.log_path = log.string();
  out.server = doc.value("server", "");
  out.category = doc.value("category", "");
  out.healthy = doc.value("healthy", false);
  out.wrapper = doc.value("wrapper", false);
  out.confidence = doc.value("confidence", "");
  if (doc.contains("fix") && doc["fix"].is_array())
    for (const json& f : doc["fix"])
      if (f.is_string() && !f.get<std::string>().empty()) out.fix.push_back(fix_name(f.get<std::string>()));
  static const std::set<std::string> kCategories{"memory_pressure", "config_conflict", "stale_output",
                                                 "other", "info"};
  if (kCategories.count(out.category) == 0) {
    error = "category \"" + out.category + "\" is not one of memory_pressure, config_conflict, stale_output, other, info";
    return false;
  }
  return true;
}

void collect(const std::string& path, std::vector<fs::path>& manifests, std::vector<std::string>& errors) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (!it->is_regular_file()) continue;
      const fs::path& p = it->path();
      if (p.extension() != ".json") continue;
      fs::path log = p;
      log.replace_extension(".log");
      if (fs::exists(log)) manifests.push_back(p);
    }
    if (ec) errors.push_back(path + ": " + ec.message());
  } else if (fs::is_regular_file(path, ec)) {
    manifests.emplace_back(path);
  } else {
    errors.push_back(path + ": no such file or directory");
  }
}

Outcome evaluate(const Rulebook& book, const Case& c) {
  Outcome o;
  o.spec = &c;
  AnalyzerOptions options;
  options.stream_name = c.log_path;
  Analyzer analyzer(book, options);
  std::string error = read_stream(c.log_path, [&](std::string_view bytes) { analyzer.feed(bytes); });
  Report report = analyzer.finish();
  const Finding* best = strongest_finding(report);
  if (best != nullptr && best->severity >= Severity::Warning) {
    o.predicted = std::string(to_string(best->category));
    o.rule = best->rule_id;
    o.tier = std::string(to_string(best->tier));
  }
  o.category_ok = o.predicted == c.category;
  std::set<std::string> names;
  for (const Finding& f : report.findings) {
    if (f.stale) continue;
    for (const RemediationItem& item : f.remediation) names.insert(item.name);
    if (f.severity >= Severity::Error && !o.alarm) {
      o.alarm = true;
      o.alarm_rule = f.rule_id;
    }
  }
  o.prescribed.assign(names.begin(), names.end());
  for (const std::string& want : c.fix) o.fix_ok |= names.count(want) > 0;
  return o;
}

struct Tally {
  std::size_t cases = 0;
  std::size_t category_ok = 0;
  std::size_t with_fix = 0;
  std::size_t fix_ok = 0;
  std::size_t healthy = 0;
  std::size_t healthy_alarms = 0;
  void add(const Outcome& o) {
    ++cases;
    category_ok += o.category_ok;
    if (!o.spec->fix.empty()) {
      ++with_fix;
      fix_ok += o.fix_ok;
    }
    if (o.spec->healthy) {
      ++healthy;
      healthy_alarms += o.alarm;
    }
  }
  double category() const { return cases == 0 ? 1.0 : static_cast<double>(category_ok) / cases; }
  double fix() const { return with_fix == 0 ? 1.0 : static_cast<double>(fix_ok) / with_fix; }
  json to_json() const {
    return json{{"cases", cases},           {"category_accuracy", category()},
                {"category_correct", category_ok}, {"with_fix", with_fix},
                {"fix_recall", fix()},      {"fix_recalled", fix_ok},
                {"healthy", healthy},       {"healthy_alarms", healthy_alarms}};
  }
};

std::string percent(double v) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << v * 100 << "%";
  return out.str();
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : " ") + s;
  return out.empty() ? "-" : out;
}

}  // namespace

void setup_eval(CLI::App& app, EvalOptions& options, int& exit_code) {
  CLI::App* eval = app.add_subcommand(
      "eval",
      "Score logrx on labelled real logs (a directory of NAME.log + NAME.json manifests, see "
      "corpus/real/README.md): category accuracy, fix recall, alarms on healthy logs, every miss");
  eval->add_option("manifests", options.manifests, "Case directories or manifests")->required();
  eval->add_option("--format", options.format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  eval->add_option("--min-category", options.min_category, "Exit 1 below this category accuracy (0-1)")
      ->check(CLI::Range(0.0, 1.0));
  eval->add_option("--min-fix", options.min_fix, "Exit 1 below this fix recall (0-1)")->check(CLI::Range(0.0, 1.0));
  eval->add_option("--max-healthy-alarms", options.max_healthy_alarms,
                   "Exit 1 when more healthy cases than this get an error or fatal finding");
  eval->add_flag("--all", options.list_all, "List every case, not only the misses");
  eval->add_option("--rules", options.rules.extra_dirs, "Also load the rules in DIR")
      ->type_name("DIR")
      ->allow_extra_args(false);
  eval->add_flag("--no-builtin-rules", options.rules.no_builtin, "Do not load the built-in rulebook");
  eval->callback([&options, &exit_code] { exit_code = run_eval(options); });
}

int run_eval(const EvalOptions& options) {
  auto book = load_rulebook(options.rules);
  if (!book) return kExitError;
  std::vector<fs::path> manifests;
  std::vector<std::string> errors;
  for (const std::string& path : options.manifests) collect(path, manifests, errors);
  std::sort(manifests.begin(), manifests.end());
  std::vector<Case> cases;
  cases.reserve(manifests.size());
  for (const fs::path& m : manifests) {
    Case c;
    std::string error;
    if (read_case(m, c, error)) {
      cases.push_back(std::move(c));
    } else {
      errors.push_back(m.string() + ": " + error);
    }
  }
  for (const std::string& e : errors) std::cerr << "logrx: " << e << "\n";
  if (!errors.empty()) return kExitError;
  if (cases.empty()) {
    std::cerr << "logrx: no cases found\n";
    return kExitError;
  }

  std::vector<Outcome> outcomes;
  Tally total;
  std::map<std::string, Tally> by_server;
  std::map<std::string, Tally> by_category;
  for (const Case& c : cases) {
    outcomes.push_back(evaluate(*book, c));
    total.add(outcomes.back());
    by_server[c.server].add(outcomes.back());
    by_category[c.category].add(outcomes.back());
  }
  bool below = total.category() < options.min_category || total.fix() < options.min_fix ||
               (options.max_healthy_alarms >= 0 &&
                total.healthy_alarms > static_cast<std::size_t>(options.max_healthy_alarms));

  if (options.format == "json") {
    json doc;
    doc["total"] = total.to_json();
    for (const auto& [name, t] : by_server) doc["by_server"][name] = t.to_json();
    for (const auto& [name, t] : by_category) doc["by_category"][name] = t.to_json();
    doc["cases"] = json::array();
    for (const Outcome& o : outcomes) {
      bool miss = !o.category_ok || (!o.spec->fix.empty() && !o.fix_ok) || (o.spec->healthy && o.alarm);
      if (!miss && !options.list_all) continue;
      doc["cases"].push_back(json{{"case", o.spec->name},
                                  {"server", o.spec->server},
                                  {"expected", o.spec->category},
                                  {"predicted", o.predicted},
                                  {"rule", o.rule},
                                  {"tier", o.tier},
                                  {"fix", o.spec->fix},
                                  {"fix_recalled", o.fix_ok},
                                  {"prescribed", o.prescribed},
                                  {"healthy", o.spec->healthy},
                                  {"alarm", o.alarm ? json(o.alarm_rule) : json(nullptr)}});
    }
    doc["passed"] = !below;
    std::cout << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  } else {
    for (const Outcome& o : outcomes) {
      const Case& c = *o.spec;
      std::vector<std::string> problems;
      if (!o.category_ok) problems.push_back("category " + o.predicted + ", expected " + c.category);
      if (!c.fix.empty() && !o.fix_ok)
        problems.push_back("fix " + join(c.fix) + " not among " + join(o.prescribed));
      if (c.healthy && o.alarm) problems.push_back("alarm on a healthy log (" + o.alarm_rule + ")");
      if (problems.empty() && !options.list_all) continue;
      std::cout << (problems.empty() ? "ok   " : "MISS ") << escape_for_terminal(c.name) << "  ["
                << (o.rule.empty() ? "no finding" : o.rule + ", " + o.tier) << "]\n";
      for (const std::string& p : problems) std::cout << "       " << escape_for_terminal(p) << "\n";
    }
    auto line = [](const std::string& label, const Tally& t) {
      std::cout << "  " << std::left << std::setw(18) << label << std::right << std::setw(5) << t.cases
                << "  category " << std::setw(6) << percent(t.category()) << "  fix " << std::setw(6)
                << (t.with_fix == 0 ? std::string("-") : percent(t.fix())) << " of " << std::setw(3)
                << t.with_fix << "  healthy alarms " << t.healthy_alarms << "/" << t.healthy << "\n";
    };
    std::cout << "\nBy server:\n";
    for (const auto& [name, t] : by_server) line(name, t);
    std::cout << "By category:\n";
    for (const auto& [name, t] : by_category) line(name, t);
    std::cout << "Total:\n";
    line("all", total);
  }
  if (below) {
    std::cerr << "logrx: below target: category " << percent(total.category()) << " (min "
              << percent(options.min_category) << "), fix " << percent(total.fix()) << " (min "
              << percent(options.min_fix) << "), healthy alarms " << total.healthy_alarms << "\n";
    return kExitFindings;
  }
  return kExitClean;
}

}  // namespace logrx::cli
