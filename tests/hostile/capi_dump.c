/* SPDX-License-Identifier: MIT */
/* Feeds a file to the C API and prints everything it hands back (each
 * finding's JSON from the callback, the report and the budget), so a test can
 * check what the C API lets out. */
#include <stdio.h>
#include <stdlib.h>

#include "logrx/logrx.h"

static void on_finding(const char* json, void* user) {
  (void)user;
  printf("%s\n", json);
}

int main(int argc, char** argv) {
  char* error = NULL;
  if (argc < 2) return 2;
  FILE* in = fopen(argv[1], "rb");
  if (in == NULL) return 2;
  logrx_rulebook* book = logrx_rulebook_load(NULL, 0, 1, &error);
  if (book == NULL) {
    fprintf(stderr, "load failed: %s\n", error ? error : "?");
    logrx_free(error);
    fclose(in);
    return 2;
  }
  logrx_analyzer* analyzer = logrx_analyzer_new(book, argv[1], NULL, &error);
  logrx_analyzer_set_callback(analyzer, on_finding, NULL);
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, in)) > 0) logrx_analyzer_feed(analyzer, buffer, n);
  fclose(in);
  char* report = logrx_analyzer_finish(analyzer);
  char* budget = logrx_analyzer_budget(analyzer);
  printf("%s\n%s\n", report ? report : "", budget ? budget : "");
  int status = report == NULL ? 1 : 0;
  logrx_free(report);
  logrx_free(budget);
  logrx_analyzer_free(analyzer);
  logrx_rulebook_free(book);
  return status;
}
