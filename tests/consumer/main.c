/* SPDX-License-Identifier: MIT */
/* Scans a log with the installed C API (linked through pkg-config). */
#include <stdio.h>
#include <string.h>

#include "logrx/logrx.h"

static void on_finding(const char* json, void* user) {
  int* count = (int*)user;
  ++*count;
  if (strstr(json, "\"rule\"") == NULL) printf("bad finding json\n");
}

int main(int argc, char** argv) {
  char* error = NULL;
  if (argc < 2) return 2;
  char* source = logrx_builtin_rules_source();
  printf("rules from %s\n", source != NULL ? source : "?");
  logrx_free(source);
  logrx_rulebook* book = logrx_rulebook_load(NULL, 0, 1, &error);
  if (book == NULL) {
    printf("load failed: %s\n", error ? error : "?");
    logrx_free(error);
    return 2;
  }
  logrx_analyzer* analyzer = logrx_analyzer_new(book, "c.log", NULL, &error);
  int count = 0;
  logrx_analyzer_set_callback(analyzer, on_finding, &count);
  logrx_analyzer_feed(analyzer, argv[1], strlen(argv[1]));
  char* report = logrx_analyzer_finish(analyzer);
  char* budget = logrx_analyzer_budget(analyzer);
  printf("version %s rules %zu findings %d report %s budget %s\n", logrx_version(),
         logrx_rulebook_size(book), count, strstr(report, "\"remediation\"") ? "ok" : "bad",
         budget != NULL ? "ok" : "none");
  logrx_free(budget);
  logrx_free(report);
  logrx_analyzer_free(analyzer);
  logrx_rulebook_free(book);
  /* Bad arguments return errors, not crashes. */
  if (logrx_analyzer_feed(NULL, "x", 1) != -1 || logrx_analyzer_new(NULL, NULL, NULL, &error) != NULL)
    return 3;
  logrx_free(error);
  return 0;
}
