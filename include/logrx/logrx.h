/* SPDX-License-Identifier: MIT */
/* The C API of logrx: for supervisors written in C, Python (ctypes), Go (cgo),
 * Rust or anything else that can call C.
 *
 *   char* error = NULL;
 *   logrx_rulebook* book = logrx_rulebook_load(NULL, 0, 1, &error);
 *   logrx_analyzer* an = logrx_analyzer_new(book, "server.log", NULL, &error);
 *   logrx_analyzer_set_callback(an, on_finding, NULL);   // JSON per finding
 *   logrx_analyzer_feed(an, buffer, length);             // any chunking
 *   char* report = logrx_analyzer_finish(an);            // the scan --format json document
 *   logrx_free(report);
 *   logrx_analyzer_free(an);
 *   logrx_rulebook_free(book);
 *
 * Handles are opaque. Strings returned by logrx are allocated by logrx and
 * must be released with logrx_free. No function throws or aborts on bad
 * input; failures return NULL (or a negative number) and, where an `error`
 * pointer is given, a message to free with logrx_free.
 *
 * Thread-safety: a rulebook is immutable and may be shared by any number of
 * analyzers on any threads. An analyzer belongs to one stream: call it from
 * one thread at a time. The callback runs synchronously inside feed/finish and
 * must not call back into the same analyzer.
 */
#ifndef LOGRX_LOGRX_H
#define LOGRX_LOGRX_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct logrx_rulebook logrx_rulebook;
typedef struct logrx_analyzer logrx_analyzer;

/* Called with one finding as a JSON object (the shape of scan --format json's
 * "findings" entries); the string is valid only during the call. */
typedef void (*logrx_finding_callback)(const char* finding_json, void* user_data);

/* "0.1.0" */
const char* logrx_version(void);

/* Loads the built-in rulebook (when include_builtin is non-zero) and then the
 * rule directories in `dirs`; a later rule with the same id replaces an
 * earlier one. Returns NULL on any rule error, with every diagnostic in *error. */
logrx_rulebook* logrx_rulebook_load(const char* const* dirs, size_t n_dirs, int include_builtin,
                                    char** error);
void logrx_rulebook_free(logrx_rulebook* book);

/* Where include_builtin takes the built-in rulebook from: $LOGRX_BUILTIN_RULES,
 * else the rules directory installed next to the library
 * (<libdir>/../share/logrx/rules), else "builtin:rules", the copy compiled
 * into the library. Free with logrx_free. */
char* logrx_builtin_rules_source(void);
size_t logrx_rulebook_size(const logrx_rulebook* book);

/* The rules as a JSON array (`logrx rules list --format json`: id, severity,
 * category, servers, title, file); free with logrx_free. */
char* logrx_rulebook_rules(const logrx_rulebook* book);

/* Creates an analyzer for one stream. `launch_command` (may be NULL) is the
 * command believed to have produced the stream; contradictions become
 * stale_output findings. The analyzer keeps its own reference to the rulebook. */
logrx_analyzer* logrx_analyzer_new(const logrx_rulebook* book, const char* stream_name,
                                   const char* launch_command, char** error);
/* The same with every option as a JSON object (NULL or "{}": defaults):
 * {"stream_name": "server.log", "launch_command": "...", "since": "2026-05-23T07:40:00Z",
 *  "file_mtime": 1779000000, "year": 2026, "server": "vllm", "redact": true, "ready_pattern": "...",
 *  "max_findings": 10000, "max_line_bytes": 65536, "max_runs": 1000}.
 * Unknown keys and wrong types are errors. */
logrx_analyzer* logrx_analyzer_new_with_options(const logrx_rulebook* book,
                                                const char* options_json, char** error);

void logrx_analyzer_set_callback(logrx_analyzer* analyzer, logrx_finding_callback callback,
                                 void* user_data);

/* Feeds bytes (lines may span calls) or one line without its newline.
 * Returns 0, or -1 when the analyzer is NULL or already finished. */
int logrx_analyzer_feed(logrx_analyzer* analyzer, const char* data, size_t length);
int logrx_analyzer_feed_line(logrx_analyzer* analyzer, const char* line, size_t length);

/* logrx_analyzer_feed for a large piece of a file held in memory: the
 * stateless work on it runs on `threads` threads (0: the cores available)
 * ahead of the in-order analysis, so the report is the one _feed gives.
 * Returns 0, or -1 when the analyzer is NULL or already finished. */
int logrx_analyzer_feed_all(logrx_analyzer* analyzer, const char* data, size_t length,
                            unsigned threads);

/* Tells the analyzer that the supervised process has ended, so a launch that
 * never became ready is known to have died (not to be still starting).
 * Returns 0, or -1 when the analyzer is NULL or already finished. */
int logrx_analyzer_note_exit(logrx_analyzer* analyzer);

/* A hung stream: closes a multi-line event (a traceback) still waiting for
 * lines, so the findings held for it reach the callback now. _poll does so
 * only when nothing was fed for `quiet_seconds` (2 is the library default);
 * call it periodically. Return 1 when an event was closed, 0 when not, -1
 * when the analyzer is NULL or finished. flush_idle returns 0 or -1. */
int logrx_analyzer_flush_idle(logrx_analyzer* analyzer);
int logrx_analyzer_poll(logrx_analyzer* analyzer, double quiet_seconds);

/* Ends the stream. Returns the report as JSON (findings, merged remediation,
 * summary, runs): free with logrx_free. Later calls return the same report. */
char* logrx_analyzer_finish(logrx_analyzer* analyzer);

/* After finish: the GPU memory budget of the latest launch as JSON (see
 * `logrx budget --format json`); free with logrx_free. NULL before finish. */
char* logrx_analyzer_budget(logrx_analyzer* analyzer);

void logrx_analyzer_free(logrx_analyzer* analyzer);

/* The relaunch helper: applies a report's merged remediation (the JSON of
 * logrx_analyzer_finish, or its "remediation" array) to a command. Only
 * applicable items are applied, each checked against the flag's arity, type
 * and range for `server` (NULL: told from argv). Returns JSON
 * {"changed", "argv", "env", "applied", "skipped", "command_line"}; free with
 * logrx_free. NULL with *error when the command cannot be rewritten (a shell
 * script with more than plain words) or the input is not remediation. */
char* logrx_apply_remediation(const logrx_rulebook* book, const char* server, const char* remediation_json,
                              const char* const* argv, size_t argc, char** error);

/* Releases a string returned by logrx. NULL is fine. */
void logrx_free(void* pointer);

#ifdef __cplusplus
}
#endif

#endif /* LOGRX_LOGRX_H */
