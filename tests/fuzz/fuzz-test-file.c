/* fuzz-test-file.c: sight_test_file_parse() on arbitrary text. */
#include "config.h"

#include <stdlib.h>

#include "sight-test-file.h"
#include "sight-fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightTestFile) file = sight_test_file_parse ("/fuzz/fuzz.sightline.json", (const char *) data,
                                                         size, &error);

  if (file == NULL && error == NULL)
    abort ();
  return 0;
}
