/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <glib.h>
#include <string.h>

#include "sight-robots.h"

static gboolean
allowed (const char *robots,
         const char *agent,
         const char *path)
{
  g_autoptr(SightRobots) r = sight_robots_parse (robots, strlen (robots), agent);

  return sight_robots_is_allowed (r, path);
}

static void
test_groups (void)
{
  const char *txt =
    "User-agent: *\n"
    "Disallow: /private\n"
    "\n"
    "User-agent: Sightline\n"
    "User-agent: other\n"
    "Disallow: /only-for-us\n"
    "Allow: /\n";

  /* Our own group replaces the `*` group entirely. */
  g_assert_true (allowed (txt, "Sightline/0.1 (X11)", "/private"));
  g_assert_false (allowed (txt, "sightline", "/only-for-us/page"));
  /* Another agent falls back to `*`. */
  g_assert_false (allowed (txt, "SomeBot/2", "/private/x"));
  g_assert_true (allowed (txt, "SomeBot/2", "/only-for-us"));
}

static void
test_longest_match_and_ties (void)
{
  const char *txt =
    "user-agent: *\n"
    "disallow: /shop\n"
    "allow: /shop/public\n"
    "allow: /tie\n"
    "disallow: /tie\n";

  g_assert_false (allowed (txt, "x", "/shop/cart"));
  g_assert_true (allowed (txt, "x", "/shop/public/item"));
  g_assert_true (allowed (txt, "x", "/tie"));
  g_assert_true (allowed (txt, "x", "/"));
}

static void
test_wildcards (void)
{
  const char *txt =
    "User-agent: *\n"
    "Disallow: /*.pdf$\n"
    "Disallow: /search*q=\n"
    "Disallow: /exact$\n";

  g_assert_false (allowed (txt, "x", "/docs/a.pdf"));
  g_assert_true (allowed (txt, "x", "/docs/a.pdf?download=1"));
  g_assert_false (allowed (txt, "x", "/search/results?q=shoes"));
  g_assert_true (allowed (txt, "x", "/search/results"));
  g_assert_false (allowed (txt, "x", "/exact"));
  g_assert_true (allowed (txt, "x", "/exactly"));
}

static void
test_encoding_comments_and_edge_cases (void)
{
  const char *txt =
    "# comment line\n"
    "User-Agent: *   # trailing comment\n"
    "Disallow: /caf%C3%A9\n"
    "Disallow: /a%3cb\n"
    "Disallow:\n"
    "Sitemap: http://127.0.0.1/sitemap.xml\n";
  g_autoptr(SightRobots) r = sight_robots_parse (txt, strlen (txt), "x");
  const char * const *maps = sight_robots_get_sitemaps (r);

  g_assert_false (sight_robots_is_allowed (r, "/caf%c3%a9/menu"));
  g_assert_false (sight_robots_is_allowed (r, "/caf\xc3\xa9"));
  g_assert_false (sight_robots_is_allowed (r, "/a<b"));
  g_assert_true (sight_robots_is_allowed (r, "/robots.txt"));
  g_assert_true (sight_robots_is_allowed (r, "/other"));
  g_assert_cmpstr (maps[0], ==, "http://127.0.0.1/sitemap.xml");
  g_assert_null (maps[1]);

  /* No robots.txt text, empty text: everything is allowed. */
  g_assert_true (allowed ("", "x", "/anything"));
  g_assert_true (allowed ("Disallow: /before-any-group\n", "x", "/before-any-group"));
}

static void
test_status (void)
{
  g_autoptr(SightRobots) not_found = sight_robots_new_for_status (404);
  g_autoptr(SightRobots) server_error = sight_robots_new_for_status (503);
  g_autoptr(SightRobots) unreachable = sight_robots_new_for_status (0);

  g_assert_true (sight_robots_is_allowed (not_found, "/x"));
  g_assert_false (sight_robots_is_allowed (server_error, "/x"));
  g_assert_false (sight_robots_is_allowed (unreachable, "/x"));
}

static void
test_size_limit (void)
{
  GString *big = g_string_new ("User-agent: *\n");
  g_autoptr(SightRobots) r = NULL;

  while (big->len < SIGHT_ROBOTS_MAX_BYTES)
    g_string_append (big, "Allow: /filler-filler-filler\n");
  /* Past 500 KiB: must be ignored. */
  g_string_append (big, "Disallow: /late\n");
  r = sight_robots_parse (big->str, big->len, "x");
  g_assert_true (sight_robots_is_allowed (r, "/late"));
  g_string_free (big, TRUE);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/robots/groups", test_groups);
  g_test_add_func ("/robots/longest-match-and-ties", test_longest_match_and_ties);
  g_test_add_func ("/robots/wildcards", test_wildcards);
  g_test_add_func ("/robots/encoding-comments-edges", test_encoding_comments_and_edge_cases);
  g_test_add_func ("/robots/status", test_status);
  g_test_add_func ("/robots/size-limit", test_size_limit);
  return g_test_run ();
}
