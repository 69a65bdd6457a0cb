/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-robots"

#include "config.h"

#include "sight-robots.h"

#include <string.h>

typedef struct {
  char     *pattern;   /* percent-encoding normalized */
  gboolean  allow;
} Rule;

struct _SightRobots
{
  GArray   *rules;     /* Rule of the chosen group(s) */
  GPtrArray *sitemaps;
  gboolean  disallow_all;
};

static void
rule_clear (Rule *rule)
{
  g_free (rule->pattern);
}

static SightRobots *
robots_new (void)
{
  SightRobots *self = g_new0 (SightRobots, 1);

  self->rules = g_array_new (FALSE, FALSE, sizeof (Rule));
  g_array_set_clear_func (self->rules, (GDestroyNotify) rule_clear);
  self->sitemaps = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (self->sitemaps, NULL);
  return self;
}

void
sight_robots_free (SightRobots *self)
{
  if (self == NULL)
    return;
  g_array_unref (self->rules);
  g_ptr_array_unref (self->sitemaps);
  g_free (self);
}

SightRobots *
sight_robots_new_for_status (guint http_status)
{
  SightRobots *self = robots_new ();

  self->disallow_all = !(http_status >= 400 && http_status < 500);
  return self;
}

/* Upper-cases percent-escapes and percent-encodes octets outside the
 * unreserved/reserved set, so "/a%3c" and "/a%3C" and "/a<" compare equal,
 * except %2F stays encoded (it is not "/"). */
static char *
normalize_path (const char *path,
                gssize      length)
{
  GString *out = g_string_new (NULL);
  const char *end = path + (length < 0 ? (gssize) strlen (path) : length);

  for (const char *p = path; p < end; p++)
    {
      guchar c = *p;

      if (c == '%' && p + 2 < end && g_ascii_isxdigit (p[1]) && g_ascii_isxdigit (p[2]))
        {
          int value = g_ascii_xdigit_value (p[1]) * 16 + g_ascii_xdigit_value (p[2]);

          /* Decode unreserved characters, keep everything else escaped. */
          if (g_ascii_isalnum (value) || strchr ("-._~", value) != NULL)
            g_string_append_c (out, value);
          else
            g_string_append_printf (out, "%%%02X", value);
          p += 2;
        }
      else if (c <= 0x20 || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '\\' ||
               c == '^' || c == '`' || c == '{' || c == '|' || c == '}')
        g_string_append_printf (out, "%%%02X", c);
      else
        g_string_append_c (out, c);
    }
  return g_string_free (out, FALSE);
}

/* Matches @pattern (with `*` and a trailing `$`) against the start of @path. */
static gboolean
pattern_matches (const char *pattern,
                 const char *path)
{
  if (*pattern == '\0')
    return TRUE;
  if (pattern[0] == '$' && pattern[1] == '\0')
    return *path == '\0';
  if (*pattern == '*')
    {
      while (pattern[1] == '*')
        pattern++;
      for (const char *p = path;; p++)
        {
          if (pattern_matches (pattern + 1, p))
            return TRUE;
          if (*p == '\0')
            return FALSE;
        }
    }
  if (*pattern != *path)
    return FALSE;
  return pattern_matches (pattern + 1, path + 1);
}

gboolean
sight_robots_is_allowed (SightRobots *self,
                         const char  *path_and_query)
{
  g_autofree char *path = NULL;
  gsize best_length = 0;
  gboolean best_allow = TRUE;
  gboolean matched = FALSE;

  g_return_val_if_fail (self != NULL, FALSE);

  if (self->disallow_all)
    return FALSE;

  path = normalize_path (path_and_query && *path_and_query ? path_and_query : "/", -1);
  /* /robots.txt itself is always allowed. */
  if (g_str_equal (path, "/robots.txt"))
    return TRUE;

  for (guint i = 0; i < self->rules->len; i++)
    {
      const Rule *rule = &g_array_index (self->rules, Rule, i);
      gsize length = strlen (rule->pattern);

      if (!pattern_matches (rule->pattern, path))
        continue;
      if (!matched || length > best_length || (length == best_length && rule->allow))
        {
          best_length = length;
          best_allow = rule->allow;
          matched = TRUE;
        }
    }
  return best_allow;
}

const char * const *
sight_robots_get_sitemaps (SightRobots *self)
{
  return (const char * const *) self->sitemaps->pdata;
}

/* The product token of a User-Agent header: letters, '-' and '_' before the
 * first '/' or space. */
static char *
product_token (const char *user_agent)
{
  gsize n = 0;

  while (user_agent[n] != '\0' &&
         (g_ascii_isalpha (user_agent[n]) || user_agent[n] == '-' || user_agent[n] == '_'))
    n++;
  return g_ascii_strdown (user_agent, n);
}

typedef struct {
  GPtrArray *agents;   /* lower-case tokens of the group's user-agent lines */
  GArray    *rules;
} Group;

static void
group_free (Group *group)
{
  g_ptr_array_unref (group->agents);
  g_array_unref (group->rules);
  g_free (group);
}

SightRobots *
sight_robots_parse (const char *text,
                    gsize       length,
                    const char *user_agent)
{
  SightRobots *self = robots_new ();
  g_autoptr(GPtrArray) groups = g_ptr_array_new_with_free_func ((GDestroyNotify) group_free);
  g_autofree char *token = product_token (user_agent ? user_agent : "");
  g_autofree char *copy = NULL;
  Group *current = NULL;
  gboolean in_agent_lines = FALSE;
  char **lines;
  GArray *chosen = NULL;

  if (text == NULL)
    return self;
  length = MIN (length, SIGHT_ROBOTS_MAX_BYTES);
  copy = g_strndup (text, length);
  lines = g_strsplit_set (copy, "\r\n", -1);

  for (char **l = lines; *l != NULL; l++)
    {
      char *line = *l;
      char *hash = strchr (line, '#');
      char *colon;
      g_autofree char *key = NULL;
      char *value;

      if (hash != NULL)
        *hash = '\0';
      colon = strchr (line, ':');
      if (colon == NULL)
        continue;
      *colon = '\0';
      key = g_ascii_strdown (g_strstrip (line), -1);
      value = g_strstrip (colon + 1);

      if (g_str_equal (key, "user-agent"))
        {
          if (current == NULL || !in_agent_lines)
            {
              current = g_new0 (Group, 1);
              current->agents = g_ptr_array_new_with_free_func (g_free);
              current->rules = g_array_new (FALSE, FALSE, sizeof (Rule));
              g_ptr_array_add (groups, current);
            }
          g_ptr_array_add (current->agents, g_ascii_strdown (value, -1));
          in_agent_lines = TRUE;
        }
      else if (g_str_equal (key, "allow") || g_str_equal (key, "disallow"))
        {
          Rule rule;

          in_agent_lines = FALSE;
          if (current == NULL)
            continue;
          /* An empty Disallow allows everything: no rule. */
          if (*value == '\0')
            continue;
          rule.allow = g_str_equal (key, "allow");
          rule.pattern = normalize_path (value, -1);
          g_array_append_val (current->rules, rule);
        }
      else if (g_str_equal (key, "sitemap"))
        {
          g_ptr_array_insert (self->sitemaps, self->sitemaps->len - 1, g_strdup (value));
        }
      else
        in_agent_lines = FALSE;
    }
  g_strfreev (lines);

  /* Rules of every group naming our token are merged; otherwise those of
   * every `*` group. */
  for (int pass = 0; pass < 2 && chosen == NULL; pass++)
    for (guint i = 0; i < groups->len; i++)
      {
        Group *group = g_ptr_array_index (groups, i);

        for (guint j = 0; j < group->agents->len; j++)
          {
            const char *agent = g_ptr_array_index (group->agents, j);
            gboolean hit = pass == 0 ? (*token != '\0' && g_str_equal (agent, token))
                                     : g_str_equal (agent, "*");

            if (hit)
              {
                for (guint k = 0; k < group->rules->len; k++)
                  {
                    Rule rule = g_array_index (group->rules, Rule, k);

                    rule.pattern = g_strdup (rule.pattern);
                    g_array_append_val (self->rules, rule);
                  }
                chosen = self->rules;
                break;
              }
          }
      }

  for (guint i = 0; i < groups->len; i++)
    {
      Group *group = g_ptr_array_index (groups, i);

      for (guint k = 0; k < group->rules->len; k++)
        g_free (g_array_index (group->rules, Rule, k).pattern);
    }
  return self;
}
