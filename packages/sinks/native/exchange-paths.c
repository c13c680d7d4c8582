/*
 * exchange-paths A B: swaps two paths atomically with renameat2(RENAME_EXCHANGE) (Linux >= 3.15).
 * Node has no binding for it; quoteflow compiles this on first use and falls back to two renames
 * where no C compiler or no renameat2 exists. Exit 0 swapped, 3 not supported here, 1 other error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: exchange-paths A B\n");
    return 2;
  }
#ifdef SYS_renameat2
  if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) == 0) return 0;
  int err = errno;
  fprintf(stderr, "renameat2(%s, %s, RENAME_EXCHANGE): %s\n", argv[1], argv[2], strerror(err));
  return err == ENOSYS || err == EINVAL ? 3 : 1;
#else
  return 3;
#endif
}
