/* fuzz-robots.c: sight_robots_parse() on arbitrary robots.txt text, then
 * the matcher on a few paths and the first line of the input. */
#include "config.h"

#include "sight-robots.h"
#include "sight-fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  static const char *paths[] = { "/", "/private/x?y=1", "/a%2Fb", "/%E2%82%AC", "/*$", "" };
  g_autofree char *text = sight_fuzz_dup_text (data, size);
  g_autofree char *first_line = g_strndup (text, strcspn (text, "\r\n"));
  g_autoptr(SightRobots) robots = sight_robots_parse ((const char *) data, size, "Sightline");
  const char * const *sitemaps;

  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    sight_robots_is_allowed (robots, paths[i]);
  sight_robots_is_allowed (robots, first_line);
  sitemaps = sight_robots_get_sitemaps (robots);
  for (guint i = 0; sitemaps != NULL && sitemaps[i] != NULL; i++)
    (void) strlen (sitemaps[i]);
  return 0;
}
