// SPDX-License-Identifier: MIT
// Runs a command under an address-space limit and reports its peak resident
// memory, so that the hostile suite asserts memory, never time.
//   logrx-peak-rss LIMIT_KB REPORT_FILE COMMAND [ARGS...]
// LIMIT_KB 0 sets no limit (AddressSanitizer reserves terabytes of address
// space). REPORT_FILE receives "<peak KB> <user+system CPU microseconds>".
// Exits with the command's status, or 128 + the signal that ended it.
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: logrx-peak-rss LIMIT_KB REPORT_FILE COMMAND [ARGS...]\n");
    return 2;
  }
  unsigned long long limit_kb = std::strtoull(argv[1], nullptr, 10);
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    return 2;
  }
  if (pid == 0) {
    if (limit_kb > 0) {
      rlimit limit{};
      limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(limit_kb) * 1024;
      if (setrlimit(RLIMIT_AS, &limit) != 0) {
        std::perror("setrlimit");
        _exit(2);
      }
    }
    execvp(argv[3], argv + 3);
    std::perror(argv[3]);
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) {
      std::perror("wait4");
      return 2;
    }
  }
  long long cpu_us = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000LL +
                     usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
  if (FILE* report = std::fopen(argv[2], "w")) {
    std::fprintf(report, "%ld %lld\n", usage.ru_maxrss, cpu_us);
    std::fclose(report);
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
