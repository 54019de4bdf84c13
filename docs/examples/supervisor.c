/* SPDX-License-Identifier: MIT */
/* The same supervisor loop through the C API (link with -llogrx). */
#include <stdio.h>
#include <string.h>

#include "logrx/logrx.h"

static void on_finding(const char* finding_json, void* user_data) {
  (void)user_data;
  if (strstr(finding_json, "\"severity\":\"fatal\"") != NULL) printf("fatal: %.80s...\n", finding_json);
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  char* error = NULL;
  logrx_rulebook* book = logrx_rulebook_load(NULL, 0, /*include_builtin=*/1, &error);
  if (book == NULL) {
    fprintf(stderr, "%s\n", error);
    logrx_free(error);
    return 2;
  }
  logrx_analyzer* analyzer = logrx_analyzer_new(book, argv[1], NULL, &error);
  logrx_analyzer_set_callback(analyzer, on_finding, NULL);

  FILE* in = fopen(argv[1], "rb");
  if (in == NULL) return 2;
  char buffer[1 << 16];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, in)) > 0) logrx_analyzer_feed(analyzer, buffer, n);
  fclose(in);

  char* report = logrx_analyzer_finish(analyzer); /* {"findings": [...], "remediation": [...], ...} */
  const char* remediation = strstr(report, "\"remediation\": [");
  printf("report: %zu bytes, merged remediation %s\n", strlen(report),
         remediation != NULL && remediation[16] != ']' ? "present" : "empty");
  logrx_free(report);
  logrx_analyzer_free(analyzer);
  logrx_rulebook_free(book);
  return 0;
}
