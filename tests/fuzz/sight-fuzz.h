/* sight-fuzz.h: what every fuzz harness in tests/fuzz/ shares.
 *
 * Each fuzz-<target>.c defines LLVMFuzzerTestOneInput().  Built with clang and
 * -fsanitize=fuzzer it is a libFuzzer target (tests/fuzz/run.sh); built with
 * any compiler together with fuzz-replay.c it is a plain program that feeds
 * every file of the directories it is given through the same entry point
 * (the 'fuzz-regressions' test suite). */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

G_BEGIN_DECLS

int LLVMFuzzerTestOneInput (const uint8_t *data,
                            size_t         size);

/* A NUL-terminated copy of the input (free with g_free). */
static inline char *
sight_fuzz_dup_text (const uint8_t *data,
                     size_t         size)
{
  char *text = g_malloc (size + 1);

  if (size > 0)
    memcpy (text, data, size);
  text[size] = '\0';
  return text;
}

G_END_DECLS
