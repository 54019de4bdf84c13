// SPDX-License-Identifier: MIT
#include "logrx/budget.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string_view>
#include <cstdio>
#include <utility>

namespace logrx {
namespace {

// What a fact may hold: sizes in GB up to far beyond any GPU (a log line is
// hostile input: 1e300 would overflow every conversion below), fractions of
// the GPU, and counts of tokens or slots.
struct Range {
  double low;
  double high;
};
constexpr Range kGigabytes{0, 1e5};
constexpr Range kFraction{0, 1};
constexpr Range kCount{0, 1e13};

Range range_of(std::string_view name) {
  if (name == "mem_fraction_static" || name == "gpu_memory_utilization") return kFraction;
  if (name == "kv_tokens" || name == "mamba_slots") return kCount;
  return kGigabytes;
}

// The number a fact holds, when it is one a GPU could have printed.
std::optional<double> fact(const RunInfo& run, const char* name) {
  auto it = run.facts.find(name);
  if (it == run.facts.end() || !it->second.number) return std::nullopt;
  double value = *it->second.number;
  Range range = range_of(name);
  if (!std::isfinite(value) || value < range.low || value > range.high) return std::nullopt;
  return value;
}

// Names the facts `fact` refused, so that the reader knows why they count as missing.
void note_rejected(const RunInfo& run, MemoryBudget& b, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    auto it = run.facts.find(name);
    if (it == run.facts.end() || !it->second.number || fact(run, name)) continue;
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%s=%g", name, *it->second.number);
    b.rejected.emplace_back(buffer);
  }
}

// Cells of a bar of `width` for `part` of `whole`, computed in double and
// bounded before the conversion (which is undefined when out of range).
int cells_of(double part, double whole, int width) {
  double cells = part / whole * width + 0.5;
  if (!(cells > 0)) return 0;
  return cells >= width ? width : static_cast<int>(cells);
}

std::string size_in(double value, const std::string& unit) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.2f %s", value, unit.c_str());
  return buffer;
}

// The unit a size fact was printed in; "" when the log did not say.
std::string unit_of(const RunInfo& run, const char* name) {
  auto it = run.facts.find(name);
  return it == run.facts.end() ? std::string() : it->second.unit;
}

std::string plain(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  return buffer;
}

}  // namespace

MemoryBudget compute_budget(const RunInfo& run) {
  MemoryBudget b;
  b.run = run.run;
  b.server = run.server;
  bool sglang = run.server == "sglang";
  b.fraction_name = sglang ? "mem_fraction_static" : "gpu_memory_utilization";
  b.fraction = fact(run, b.fraction_name.c_str());

  // The budget speaks the log's unit: that of the GPU's size, else the one
  // most of its sizes were printed in (GB when none says).
  b.unit = unit_of(run, "gpu_total_gb");
  if (b.unit.empty()) {
    int gib = 0, gb_count = 0;
    for (const char* name : {"weights_gb", "draft_weights_gb", "kv_gb", "mamba_gb", "cuda_graph_gb",
                             "free_before_load_gb", "init_mem_gb", "available_gpu_mem_gb",
                             "avail_mem_gb", "avail_after_pool_gb"}) {
      std::string unit = unit_of(run, name);
      gib += unit == "GiB";
      gb_count += unit == "GB";
    }
    b.unit = gib > gb_count ? "GiB" : "GB";
  }
  auto gb = [&b](double value) { return size_in(value, b.unit); };
  b.total_gb = fact(run, "gpu_total_gb");
  if (!b.total_gb) {
    auto free_before = fact(run, "free_before_load_gb");
    if (free_before) {
      // SGLang reports free memory after the CUDA context, not the card's size.
      b.total_gb = *free_before + fact(run, "init_mem_gb").value_or(0);
      b.total_estimated = true;
      b.arithmetic.push_back("GPU memory ~ free before weights " + gb(*free_before) +
                             (fact(run, "init_mem_gb") ? " + CUDA/NCCL init " + gb(*fact(run, "init_mem_gb")) : "") +
                             " = " + gb(*b.total_gb) + " (the log does not print the card's size)");
    }
  }

  auto add = [&](const char* name, const char* fact_name, std::string detail) {
    std::string unit = unit_of(run, fact_name);
    b.parts.push_back(BudgetPart{name, fact(run, fact_name), std::move(detail),
                                 unit.empty() ? b.unit : unit});
  };
  add("weights", "weights_gb", "");
  if (fact(run, "draft_weights_gb")) add("draft weights", "draft_weights_gb", "speculative draft model");
  auto count = [&](const char* fact_name, const char* unit) {
    auto value = fact(run, fact_name);
    if (!value) return std::string();
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "%.0f %s", *value, unit);
    return std::string(buffer);
  };
  add("KV cache", "kv_gb", count("kv_tokens", "tokens"));
  if (fact(run, "mamba_gb") || fact(run, "mamba_slots"))
    add("Mamba state cache", "mamba_gb", count("mamba_slots", "slots"));
  add("CUDA graphs", "cuda_graph_gb", "");

  b.free_gb = fact(run, "available_gpu_mem_gb");
  if (!b.free_gb) b.free_gb = fact(run, "avail_mem_gb");
  if (!b.free_gb) b.free_gb = fact(run, "avail_after_pool_gb");

  double used = 0;
  std::string sum;
  for (const BudgetPart& part : b.parts) {
    if (!part.gb) {
      b.missing.push_back(part.name);
      continue;
    }
    used += *part.gb;
    sum += (sum.empty() ? "" : " + ") + plain(*part.gb);
  }
  if (!sum.empty()) b.arithmetic.push_back("accounted for: " + sum + " = " + gb(used));
  if (b.total_gb) {
    if (b.fraction) {
      double share = *b.fraction * *b.total_gb;
      b.arithmetic.push_back(b.fraction_name + " " + plain(*b.fraction) + " x " + gb(*b.total_gb) +
                             " = " + gb(share) + " for " +
                             (sglang ? "weights and static pools" : "everything vLLM allocates"));
      if (used > 0 && share > used)
        b.arithmetic.push_back("of that share, " + gb(share - used) +
                               " is not in any pool the log reports");
    }
    if (b.free_gb && *b.total_gb > 0)
      b.arithmetic.push_back("free when ready: " + gb(*b.free_gb) + " = " +
                             plain(100.0 * *b.free_gb / *b.total_gb) + "% of the GPU");
  }
  if (!b.total_gb) b.missing.push_back("GPU memory size");
  if (!b.fraction) b.missing.push_back(b.fraction_name);
  if (!b.free_gb) b.missing.push_back("free memory after start-up");
  note_rejected(run, b,
                {"gpu_total_gb", "free_before_load_gb", "init_mem_gb", b.fraction_name.c_str(),
                 "weights_gb", "draft_weights_gb", "kv_gb", "kv_tokens", "mamba_gb", "mamba_slots",
                 "cuda_graph_gb", "available_gpu_mem_gb", "avail_mem_gb", "avail_after_pool_gb"});
  return b;
}

bool budget_has_figures(const MemoryBudget& b) {
  return b.total_gb || b.fraction || b.free_gb ||
         std::any_of(b.parts.begin(), b.parts.end(), [](const BudgetPart& p) { return p.gb.has_value(); });
}

void write_budget_text(std::ostream& out, const MemoryBudget& b, bool color) {
  auto gb = [&b](double value) { return size_in(value, b.unit); };
  auto paint = [color](const char* code) { return color ? code : ""; };
  const char* reset = color ? "\x1b[0m" : "";
  // One letter and colour per kind of memory, so the bar reads without colour too.
  auto style = [](const std::string& name) -> std::pair<char, const char*> {
    if (name == "weights") return {'W', "\x1b[44m"};
    if (name == "draft weights") return {'D', "\x1b[46m"};
    if (name == "KV cache") return {'K', "\x1b[42m"};
    if (name == "Mamba state cache") return {'M', "\x1b[45m"};
    return {'G', "\x1b[43m"};
  };
  out << "GPU memory budget of run " << b.run << " (" << b.server << ")";
  if (b.total_gb) out << ": " << gb(*b.total_gb) << (b.total_estimated ? " (estimated)" : "");
  out << "\n";

  if (b.total_gb && *b.total_gb > 0) {
    constexpr int kWidth = 60;
    std::string bar;
    int used_cells = 0;
    out << "  [";
    for (std::size_t i = 0; i < b.parts.size(); ++i) {
      if (!b.parts[i].gb || *b.parts[i].gb <= 0) continue;
      int cells = cells_of(*b.parts[i].gb, *b.total_gb, kWidth);
      if (cells == 0) cells = 1;
      cells = std::min(cells, kWidth - used_cells);
      used_cells += cells;
      auto [glyph, colour] = style(b.parts[i].name);
      out << paint(colour) << std::string(static_cast<std::size_t>(cells), glyph) << reset;
    }
    int free_cells = b.free_gb ? cells_of(*b.free_gb, *b.total_gb, kWidth) : 0;
    free_cells = std::min(free_cells, kWidth - used_cells);
    int other_cells = kWidth - used_cells - free_cells;
    out << std::string(static_cast<std::size_t>(std::max(other_cells, 0)), '#')
        << std::string(static_cast<std::size_t>(std::max(free_cells, 0)), '.') << "]\n";
  }
  for (std::size_t i = 0; i < b.parts.size(); ++i) {
    const BudgetPart& part = b.parts[i];
    auto [letter, colour] = style(part.name);
    char glyph[4] = {' ', letter, ' ', '\0'};
    out << "  " << paint(colour) << glyph << reset << " " << part.name << ": "
        << (part.gb ? size_in(*part.gb, part.unit) : std::string("not reported"));
    if (!part.detail.empty()) out << " (" << part.detail << ")";
    out << "\n";
  }
  if (b.total_gb) out << "  #  other (activations, CUDA context, allocator reserve, unreported)\n";
  out << "  .  free when ready: " << (b.free_gb ? gb(*b.free_gb) : std::string("not reported"))
      << "\n";
  if (b.fraction) out << "  " << b.fraction_name << ": " << plain(*b.fraction) << "\n";
  if (!b.arithmetic.empty()) {
    out << "Arithmetic:\n";
    for (const std::string& line : b.arithmetic) out << "  " << line << "\n";
  }
  if (!b.remediation.empty()) {
    out << "Suggested flags:\n";
    for (const RemediationItem& item : b.remediation) {
      out << "  " << item.name;
      if (item.value)
        out << (item.kind == RemediationItem::Kind::Env || item.kind == RemediationItem::Kind::Container ? "=" : " ")
            << *item.value;
      if (!item.why.empty()) out << "  (" << item.why << ")";
      out << "\n";
    }
  }
  if (!b.rejected.empty()) {
    out << "Ignored (not a plausible figure):";
    for (std::size_t i = 0; i < b.rejected.size(); ++i) out << (i ? ", " : " ") << b.rejected[i];
    out << "\n";
  }
  if (!b.missing.empty()) {
    out << "Not in the log:";
    for (std::size_t i = 0; i < b.missing.size(); ++i) out << (i ? ", " : " ") << b.missing[i];
    out << "\n";
  }
}

}  // namespace logrx
