// SPDX-License-Identifier: MIT
#include "logrx/analyzer.h"

#include <utility>

#include "logrx/line.h"
#include "match/rulebook_impl.h"
#include "match/template.h"

namespace logrx {

struct Analyzer::Impl {
  Impl(Rulebook book, AnalyzerOptions opts)
      : rulebook(std::move(book)),
        rules(RulebookAccess::impl(rulebook)),
        options(std::move(opts)),
        splitter(options.max_line_bytes) {}

  Rulebook rulebook;  // keeps `rules` alive
  const Rulebook::Impl& rules;
  AnalyzerOptions options;
  LineSplitter splitter;
  LineEvent event;
  std::vector<int> candidates;
  std::map<std::string, std::string> captures;
  FindingCallback callback;
  Report report;
  // Continuation lines (tracebacks, raw prints) carry no header: they belong
  // to the server the stream was last seen writing.
  Dialect stream_dialect = Dialect::Unknown;
  bool finished = false;

  void process(std::string_view raw, bool truncated) {
    ++report.summary.lines;
    parse_line(raw, report.summary.lines, event);
    event.truncated = truncated;
    if (truncated) ++report.summary.truncated_lines;
    if (event.dialect != Dialect::Unknown) stream_dialect = event.dialect;
    if (event.message.empty()) return;
    if (!rules.candidates(event.message, candidates) || candidates.empty()) return;
    Dialect effective = event.dialect != Dialect::Unknown ? event.dialect : stream_dialect;
    for (int candidate : candidates) {
      auto index = static_cast<std::size_t>(candidate);
      if (!rules.applies_to(index, effective)) continue;
      if (!rules.extract(index, event.message, captures)) continue;
      emit(make_finding(rules.rules[index], effective));
    }
  }

  Finding make_finding(const RuleSpec& rule, Dialect effective) const {
    Finding f;
    f.rule_id = rule.id;
    f.title = detail::expand_template(rule.title, captures).value_or(rule.title);
    f.explanation = rule.explanation;
    f.category = rule.category;
    f.severity = rule.severity;
    f.file = options.stream_name;
    f.line = event.line;
    f.end_line = event.line;
    if (rule.servers.size() == 1 && rule.servers[0] != "any") {
      f.server = rule.servers[0];
    } else {
      f.server = std::string(to_string(effective));
    }
    f.message = event.message;
    f.level = event.level;
    f.process = event.process;
    f.timestamp = event.timestamp_text;
    f.captures = captures;
    for (const RemediationSpec& spec : rule.remediation) {
      RemediationItem item;
      item.kind = spec.kind == RemediationSpec::Kind::Flag ? RemediationItem::Kind::Flag
                                                           : RemediationItem::Kind::Env;
      item.name = spec.name;
      if (spec.value) {
        // A value built from a capture the line did not carry would be a
        // guess; leave the item out rather than prescribe a wrong number.
        auto value = detail::expand_template(*spec.value, captures);
        if (!value) continue;
        item.value = std::move(*value);
      }
      item.why = detail::expand_template(spec.why, captures).value_or(spec.why);
      item.alternative = spec.alternative;
      item.rule_id = rule.id;
      f.remediation.push_back(std::move(item));
    }
    f.references = rule.references;
    f.evidence.push_back(EvidenceLine{event.line, event.text});
    return f;
  }

  void emit(Finding finding) {
    Summary& s = report.summary;
    ++s.findings;
    if (!s.worst_severity || finding.severity > *s.worst_severity)
      s.worst_severity = finding.severity;
    ++s.by_category[std::string(to_string(finding.category))];
    ++s.by_severity[std::string(to_string(finding.severity))];
    if (callback) callback(finding);
    if (report.findings.size() < options.max_findings) {
      report.findings.push_back(std::move(finding));
    } else {
      ++s.findings_dropped;
    }
  }
};

Analyzer::Analyzer(Rulebook rulebook, AnalyzerOptions options)
    : impl_(std::make_unique<Impl>(std::move(rulebook), std::move(options))) {}

Analyzer::~Analyzer() = default;
Analyzer::Analyzer(Analyzer&&) noexcept = default;
Analyzer& Analyzer::operator=(Analyzer&&) noexcept = default;

void Analyzer::on_finding(FindingCallback callback) { impl_->callback = std::move(callback); }

void Analyzer::feed(std::string_view bytes) {
  impl_->splitter.feed(bytes, [this](std::string_view line, bool truncated) {
    impl_->process(line, truncated);
  });
}

void Analyzer::feed_line(std::string_view line) {
  bool truncated = line.size() > impl_->options.max_line_bytes;
  impl_->process(truncated ? line.substr(0, impl_->options.max_line_bytes) : line, truncated);
}

Report Analyzer::finish() {
  if (!impl_->finished) {
    impl_->splitter.finish([this](std::string_view line, bool truncated) {
      impl_->process(line, truncated);
    });
    impl_->finished = true;
    impl_->report.remediation = merge_remediation(impl_->report.findings);
  }
  return impl_->report;
}

std::uint64_t Analyzer::lines() const noexcept { return impl_->report.summary.lines; }

}  // namespace logrx
