// SPDX-License-Identifier: MIT
// Remediation applied to a launch command. Nothing reaches the command line
// that the server's argument parser would refuse: advice stays advice, a
// value is checked against the flag's spec, a value flag never goes bare.
#include "logrx/relaunch.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace logrx {
namespace {

bool is_number(std::string_view word) {
  if (word.empty()) return false;
  std::size_t i = word[0] == '-' || word[0] == '+' ? 1 : 0;
  bool digit = false;
  for (; i < word.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(word[i]))) digit = true;
    else if (word[i] != '.' && word[i] != 'e' && word[i] != 'E' && word[i] != '-') return false;
  }
  return digit;
}

// The word after a flag is its value unless it is another flag.
bool is_value_word(const std::string& word) { return word.empty() || word[0] != '-' || is_number(word); }

bool is_shell(std::string_view program) {
  std::size_t slash = program.rfind('/');
  std::string_view base = slash == std::string_view::npos ? program : program.substr(slash + 1);
  return base == "sh" || base == "bash" || base == "dash" || base == "zsh" || base == "ksh" || base == "ash";
}

// Index of the script argument of `sh -c SCRIPT`, or 0.
std::size_t shell_script_index(const std::vector<std::string>& argv) {
  if (argv.empty() || !is_shell(argv[0])) return 0;
  for (std::size_t i = 1; i + 1 < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() < 2 || a[0] != '-' || a[1] == '-') return 0;  // a script file or a long option
    bool letters = std::all_of(a.begin() + 1, a.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
    if (letters && a.find('c') != std::string::npos) return i + 1;
  }
  return 0;
}

// Splits a script of plain words; anything a shell would interpret (;, |,
// $, globs, redirections, ...) is refused, with the reason in `why`.
std::optional<std::vector<std::string>> split_plain_words(std::string_view script, std::string& why) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < script.size(); ++i) {
    char c = script[i];
    if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      std::size_t end = script.find('\'', i + 1);
      if (end == std::string_view::npos) { why = "an unterminated quote"; return std::nullopt; }
      word.append(script.substr(i + 1, end - i - 1));
      i = end;
    } else if (c == '"') {
      for (++i;; ++i) {
        if (i >= script.size()) { why = "an unterminated quote"; return std::nullopt; }
        char d = script[i];
        if (d == '"') break;
        if (d == '$' || d == '`') { why = std::string("an expansion (") + d + ")"; return std::nullopt; }
        if (d == '\\' && i + 1 < script.size() && std::string_view("\"\\$`").find(script[i + 1]) != std::string_view::npos)
          d = script[++i];
        word += d;
      }
    } else if (c == '\\') {
      if (i + 1 >= script.size() || script[i + 1] == '\n') { why = "a line continuation"; return std::nullopt; }
      word += script[++i];
    } else if (std::string_view(";&|<>()$`\n#*?[]{}~").find(c) != std::string_view::npos) {
      why = std::string("'") + (c == '\n' ? std::string("\\n") : std::string(1, c)) +
            "' (several commands, a pipe, a redirection or an expansion)";
      return std::nullopt;
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

bool is_assignment(const std::string& word) {
  std::size_t eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  return std::all_of(word.begin(), word.begin() + static_cast<std::ptrdiff_t>(eq), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  }) && !std::isdigit(static_cast<unsigned char>(word[0]));
}

std::vector<std::string> split_list(const std::string& value) {
  std::vector<std::string> out;
  std::string word;
  for (char c : value) {
    if (c == ',' || c == ' ') {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

void apply_flag(const FlagSpec& spec, const std::string& name, const std::optional<std::string>& value,
                std::vector<std::string>& args, ApplyOutcome& outcome) {
  auto same = [&](const std::string& a) { return a == name || a.rfind(name + "=", 0) == 0; };
  if (spec.arity == FlagSpec::Arity::Switch) {
    if (std::any_of(args.begin() + 1, args.end(), same)) return;
    // --no-enable-x and --enable-x undo each other: the prescribed one stays.
    std::string opposite = name.rfind("--no-", 0) == 0 ? "--" + name.substr(5) : "--no-" + name.substr(2);
    auto it = std::find(args.begin() + 1, args.end(), opposite);
    if (it != args.end()) {
      args.erase(it);
      outcome.applied.push_back(name + " (instead of " + opposite + ")");
    } else {
      outcome.applied.push_back(name);
    }
    args.push_back(name);
    outcome.changed = true;
    return;
  }
  std::vector<std::string> words = spec.nargs ? split_list(*value) : std::vector<std::string>{*value};
  std::string shown = name;
  for (const std::string& w : words) shown += " " + w;
  if (spec.arity == FlagSpec::Arity::Repeatable) {
    for (std::size_t i = 1; i < args.size(); ++i) {
      if (args[i] == name + "=" + *value) return;
      if (args[i] == name && i + 1 < args.size() && args[i + 1] == *value) return;
    }
    args.push_back(name);
    args.insert(args.end(), words.begin(), words.end());
    outcome.applied.push_back(shown);
    outcome.changed = true;
    return;
  }
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i].rfind(name + "=", 0) == 0) {
      std::string old = args[i].substr(name.size() + 1);
      if (old == *value) return;
      args[i] = name + "=" + *value;
      outcome.applied.push_back(name + "=" + *value + " (was " + old + ")");
      outcome.changed = true;
      return;
    }
    if (args[i] != name) continue;
    std::size_t end = i + 1;
    while (end < args.size() && is_value_word(args[end]) && (spec.nargs || end == i + 1)) ++end;
    std::vector<std::string> old(args.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                 args.begin() + static_cast<std::ptrdiff_t>(end));
    if (old == words) return;
    std::string was;
    for (const std::string& w : old) was += (was.empty() ? "" : " ") + w;
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.begin() + static_cast<std::ptrdiff_t>(end));
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, words.begin(), words.end());
    outcome.applied.push_back(shown + (old.empty() ? std::string() : " (was " + was + ")"));
    outcome.changed = true;
    return;
  }
  args.push_back(name);
  args.insert(args.end(), words.begin(), words.end());
  outcome.applied.push_back(shown);
  outcome.changed = true;
}

void apply_items(const Rulebook& book, std::string_view server, const std::vector<RemediationItem>& items,
                 std::vector<std::string>& args, std::map<std::string, std::string>& env,
                 ApplyOutcome& outcome) {
  std::string server_name = server.empty() ? std::string("server") : std::string(server);
  for (const RemediationItem& item : items) {
    if (item.alternative) continue;
    if (!item.applicable) {
      std::string reason = !item.note.empty() ? item.note : !item.why.empty() ? "advice: " + item.why : "advice";
      outcome.skipped.push_back(item.name + " (" + reason + ")");
      continue;
    }
    if (item.kind == RemediationItem::Kind::Param) {
      outcome.skipped.push_back(item.name + " (a model or request parameter, not a launch argument)");
      continue;
    }
    if (item.kind == RemediationItem::Kind::Container) {
      outcome.skipped.push_back(item.name + " (an option of the container, not of the server)");
      continue;
    }
    if (!book.knows(server, item.name)) {
      outcome.skipped.push_back(item.name + " (not a known " + server_name +
                                (item.kind == RemediationItem::Kind::Flag ? " flag)" : " variable)"));
      continue;
    }
    if (item.kind == RemediationItem::Kind::Env) {
      if (!item.value) {
        outcome.skipped.push_back(item.name + " (a variable without a value)");
        continue;
      }
      auto it = env.find(item.name);
      if (it == env.end() || it->second != *item.value) {
        env[item.name] = *item.value;
        outcome.changed = true;
        outcome.applied.push_back(item.name + "=" + *item.value);
      }
      continue;
    }
    FlagSpec spec = book.flag_spec(server, item.name);
    ArgumentCheck check = check_argument(spec, item.name, item.value);
    if (!check.applicable) {
      outcome.skipped.push_back(item.name + " (" + check.note + ")");
      continue;
    }
    apply_flag(spec, item.name, check.value, args, outcome);
  }
}

}  // namespace

std::string detect_server(const std::vector<std::string>& command) {
  auto has = [&](std::string_view needle) {
    for (const std::string& word : command)
      if (word.find(needle) != std::string::npos) return true;
    return false;
  };
  if (has("sglang")) return "sglang";
  if (has("vllm")) return "vllm";
  if (has("text-generation-launcher") || has("text-generation-server") || has("text-embeddings-router"))
    return "tgi";
  if (has("llama-server") || has("llama.cpp")) return "llamacpp";
  if (has("trtllm")) return "trtllm";
  if (has("lmdeploy")) return "lmdeploy";
  if (has("ollama")) return "ollama";
  return "";
}

std::string rewrite_problem(const std::vector<std::string>& argv) {
  std::size_t index = shell_script_index(argv);
  if (index == 0) return "";
  std::string why;
  if (!split_plain_words(argv[index], why))
    return "the command is a shell script (" + argv[0] + " -c \"...\") with " + why +
           ", which logrx cannot rewrite safely; give the server command directly after --, or "
           "make the script plain words (exec and VAR=value are fine)";
  return "";
}

ApplyOutcome apply_remediation(const Rulebook& book, std::string_view server,
                               const std::vector<RemediationItem>& items, LaunchCommand& command) {
  ApplyOutcome outcome;
  if (command.argv.empty()) {
    outcome.error = "empty command";
    return outcome;
  }
  std::size_t index = shell_script_index(command.argv);
  if (index == 0) {
    apply_items(book, server, items, command.argv, command.env, outcome);
    return outcome;
  }
  std::string why;
  auto words = split_plain_words(command.argv[index], why);
  if (!words) {
    outcome.error = rewrite_problem(command.argv);
    return outcome;
  }
  // The fix goes inside the script, on the server's own command line.
  std::size_t start = 0;
  while (start < words->size() && is_assignment((*words)[start])) ++start;
  if (start < words->size() && (*words)[start] == "exec") ++start;
  if (start >= words->size()) {
    outcome.error = "the shell script runs no command logrx can rewrite";
    return outcome;
  }
  std::vector<std::string> prefix(words->begin(), words->begin() + static_cast<std::ptrdiff_t>(start));
  std::vector<std::string> inner(words->begin() + static_cast<std::ptrdiff_t>(start), words->end());
  apply_items(book, server, items, inner, command.env, outcome);
  if (!outcome.changed) return outcome;
  std::string script;
  for (const std::string& w : prefix) script += (script.empty() ? "" : " ") + (is_assignment(w) ? w.substr(0, w.find('=') + 1) + shell_quote(w.substr(w.find('=') + 1)) : shell_quote(w));
  for (const std::string& w : inner) script += (script.empty() ? "" : " ") + shell_quote(w);
  command.argv[index] = script;
  return outcome;
}

std::string shell_quote(std::string_view word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789-_./=:,+@%") == std::string_view::npos)
    return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string command_line(const LaunchCommand& command) {
  std::string out;
  for (const auto& [name, value] : command.env) out += name + "=" + shell_quote(value) + " ";
  for (std::size_t i = 0; i < command.argv.size(); ++i) out += (i ? " " : "") + shell_quote(command.argv[i]);
  return out;
}

}  // namespace logrx
