/* fuzz-direct-step.c: sight_direct_step_parse() on arbitrary text; a step that
 * parses must print to a canonical text that parses again. */
#include "config.h"

#include <stdlib.h>

#include "sight-direct-step.h"
#include "sight-fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *text = sight_fuzz_dup_text (data, size);
  g_autoptr(GError) error = NULL;
  g_autoptr(SightDirectStep) step = sight_direct_step_parse (text, &error);

  if (step != NULL)
    {
      g_autofree char *canonical = sight_direct_step_to_text (step);
      g_autoptr(GError) again_error = NULL;
      g_autoptr(SightDirectStep) again = sight_direct_step_parse (canonical, &again_error);

      if (again == NULL)
        {
          g_printerr ("canonical text %s of %s does not parse: %s\n",
                      canonical, text, again_error->message);
          abort ();
        }
    }
  else if (error == NULL)
    abort ();
  return 0;
}
