// SPDX-License-Identifier: MIT
// Outputs for CI systems: SARIF for code scanning and GitHub workflow commands.
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "logrx/line.h"
#include "logrx/output.h"
#include "logrx/version.h"
#include "match/template.h"

namespace logrx {
namespace {

using ojson = nlohmann::ordered_json;

const char* sarif_level(const Finding& f) {
  if (f.stale) return "note";
  switch (f.severity) {
    case Severity::Fatal:
    case Severity::Error:
      return "error";
    case Severity::Warning:
      return "warning";
    case Severity::Info:
      break;
  }
  return "note";
}

// A SARIF artifact URI is a URI reference: relative paths stay relative, but
// characters outside the unreserved set are percent-encoded.
std::string uri_reference(const std::string& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

std::string remediation_help(const RuleSpec& rule) {
  std::string help;
  for (const RemediationSpec& item : rule.remediation) {
    help += item.alternative ? "\n  or: " : "\n  fix: ";
    help += item.name;
    if (item.value)
      help += (item.kind == RemediationSpec::Kind::Env || item.kind == RemediationSpec::Kind::Container ? "=" : " ") +
              *item.value;
    if (!item.expr.empty()) help += " <computed: " + item.expr + ">";
    if (!item.when.empty()) help += "  (when " + item.when + ")";
  }
  return help;
}

std::string finding_text(const Finding& f) {
  std::string text = f.title + ": " + f.message;
  for (const RemediationItem& item : f.remediation) {
    text += item.alternative ? " | or " : " | fix ";
    text += item.name;
    if (item.value)
      text += (item.kind == RemediationItem::Kind::Env || item.kind == RemediationItem::Kind::Container ? "=" : " ") +
              *item.value;
  }
  if (f.stale) text += " (stale: from an earlier launch or another process)";
  return text;
}

// A rule's title as a description of every finding of it: its template
// with nothing filled in (references left out, expressions on their
// fallbacks), never raw "{name}" or "{= ...}" source.
std::string generic_title(const std::string& title) {
  // A plain reference ("{tokens}") stands for "…"; "{{" stays a literal brace.
  std::string source;
  for (std::size_t i = 0; i < title.size(); ++i) {
    if (title[i] == '{' && i + 1 < title.size() && title[i + 1] == '{') {
      source += "{{";
      ++i;
      continue;
    }
    std::size_t end = i + 1;
    while (title[i] == '{' && end < title.size() &&
           (std::isalnum(static_cast<unsigned char>(title[end])) || title[end] == '_' ||
            title[end] == '.'))
      ++end;
    if (title[i] == '{' && end > i + 1 && end < title.size() && title[end] == '}') {
      source += "\xe2\x80\xa6";
      i = end;
      continue;
    }
    source += title[i];
  }
  std::string text = detail::expand_display(
      source, [](const std::string&) -> std::optional<detail::Value> { return std::nullopt; });
  // What leaving a reference out leaves behind: "()", " ,", double spaces.
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, " ()") == 0) {
      i += 2;
      continue;
    }
    if (text.compare(i, 2, "()") == 0) {
      ++i;
      continue;
    }
    if (text[i] == ' ' && (out.empty() || out.back() == ' ' || out.back() == '(')) continue;
    if ((text[i] == ',' || text[i] == ')' || text[i] == ':') && !out.empty() && out.back() == ' ')
      out.pop_back();
    out += text[i];
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

std::string to_sarif(const Report& report, const Rulebook& book, int indent) {
  ojson driver;
  driver["name"] = "logrx";
  driver["version"] = LOGRX_VERSION;
  driver["informationUri"] = "https://github.com/logrx/logrx";
  driver["rules"] = ojson::array();
  std::map<std::string, std::size_t> rule_index;
  for (const Finding& f : report.findings) {
    if (rule_index.count(f.rule_id) > 0) continue;
    rule_index[f.rule_id] = rule_index.size();
    ojson rule;
    rule["id"] = f.rule_id;
    const RuleSpec* spec = book.find(f.rule_id);
    std::string title = spec != nullptr ? generic_title(spec->title) : f.title;
    // A title that is one expression over the captures has no generic form:
    // the first finding's own title describes the rule best then.
    if (title.empty()) title = f.title;
    std::string explanation = spec != nullptr ? spec->explanation : f.explanation;
    rule["shortDescription"] = ojson{{"text", title}};
    rule["fullDescription"] = ojson{{"text", explanation}};
    std::string help = explanation;
    if (spec != nullptr && !spec->remediation.empty()) help += "\nRemediation:" + remediation_help(*spec);
    rule["help"] = ojson{{"text", help}};
    const std::vector<std::string>& refs = spec != nullptr ? spec->references : f.references;
    if (!refs.empty()) rule["helpUri"] = refs.front();
    Finding level_probe;
    level_probe.severity = spec != nullptr ? spec->severity : f.severity;
    rule["defaultConfiguration"] = ojson{{"level", sarif_level(level_probe)}};
    rule["properties"] = ojson{{"category", std::string(to_string(f.category))},
                               {"tags", ojson::array({std::string(to_string(f.category))})}};
    driver["rules"].push_back(std::move(rule));
  }

  ojson results = ojson::array();
  for (const Finding& f : report.findings) {
    ojson result;
    result["ruleId"] = f.rule_id;
    result["ruleIndex"] = rule_index[f.rule_id];
    result["level"] = sarif_level(f);
    result["message"] = ojson{{"text", finding_text(f)}};
    ojson region{{"startLine", f.line == 0 ? 1 : f.line}};
    if (f.end_line > f.line) region["endLine"] = f.end_line;
    std::string uri = f.file == "<stdin>" ? "stdin" : uri_reference(f.file);
    result["locations"] = ojson::array(
        {ojson{{"physicalLocation", ojson{{"artifactLocation", ojson{{"uri", uri}}}, {"region", region}}}}});
    ojson properties{{"severity", std::string(to_string(f.severity))},
                     {"category", std::string(to_string(f.category))},
                     {"run", f.run},
                     {"stale", f.stale},
                     {"tier", std::string(to_string(f.tier))}};
    if (!f.phase.empty()) properties["phase"] = f.phase;
    if (!f.ranks.empty()) properties["ranks"] = f.ranks;
    result["properties"] = std::move(properties);
    results.push_back(std::move(result));
  }

  ojson run;
  run["tool"] = ojson{{"driver", std::move(driver)}};
  run["results"] = std::move(results);
  ojson doc;
  doc["$schema"] = "https://json.schemastore.org/sarif-2.1.0.json";
  doc["version"] = "2.1.0";
  doc["runs"] = ojson::array({std::move(run)});
  return escape_json_controls(doc.dump(indent, ' ', false, ojson::error_handler_t::replace));
}

// Workflow commands are read by the runner and shown on a web page: control,
// bidi and zero-width characters are written visibly first, then the
// command's own separators encoded.
std::string escape_github_data(std::string_view text) {
  std::string out;
  for (char c : escape_control_characters(text, "\t\r\n")) {
    if (c == '%') {
      out += "%25";
    } else if (c == '\r') {
      out += "%0D";
    } else if (c == '\n') {
      out += "%0A";
    } else {
      out += c;
    }
  }
  return out;
}

std::string escape_github_property(std::string_view text) {
  std::string out;
  for (char c : escape_github_data(text)) {
    if (c == ':') {
      out += "%3A";
    } else if (c == ',') {
      out += "%2C";
    } else {
      out += c;
    }
  }
  return out;
}

std::string to_github_annotations(const Report& report) {
  std::string out;
  for (const Finding& f : report.findings) {
    const char* command = "notice";
    if (!f.stale && f.severity >= Severity::Error) command = "error";
    if (!f.stale && f.severity == Severity::Warning) command = "warning";
    out += "::";
    out += command;
    out += " file=" + escape_github_property(f.file) + ",line=" + std::to_string(f.line);
    if (f.end_line > f.line) out += ",endLine=" + std::to_string(f.end_line);
    out += ",title=" + escape_github_property(f.rule_id + ": " + f.title);
    out += "::" + escape_github_data(finding_text(f)) + "\n";
  }
  return out;
}

}  // namespace logrx
