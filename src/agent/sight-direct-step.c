/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-direct-step"

#include "config.h"

#include "sight-direct-step.h"

#include <stdlib.h>
#include <string.h>

#include "sight-agent-enums.h"
#include "sight-enum.h"
#include "sight-error.h"
#include "sight-observation.h"

/* The grammar works on tokens: words, and quoted strings kept whole. Keywords
 * compare case-insensitively against unquoted words only, so a quoted "Back"
 * is always a name and never the verb. */

typedef struct {
  char     *text;
  gboolean  quoted;
} Token;

typedef struct {
  GArray *tokens;   /* Token */
  guint   n;
} Tokens;

static void
token_clear (gpointer data)
{
  Token *token = data;

  g_free (token->text);
}

static void
tokens_free (Tokens *toks)
{
  g_array_unref (toks->tokens);
  g_free (toks);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Tokens, tokens_free)

#define TOK(t, i) (&g_array_index ((t)->tokens, Token, (i)))

static const struct {
  const char *from;
  const char *to;
} quote_forms[] = {
  { "\u201c", "\"" }, { "\u201d", "\"" }, { "\u201e", "\"" }, { "\u201f", "\"" },
  { "\u00ab", "\"" }, { "\u00bb", "\"" }, { "\u2033", "\"" },
  { "\u2018", "'" }, { "\u2019", "'" }, { "\u201a", "'" }, { "\u2032", "'" },
  { "\u00a0", " " },
};

static char *
normalize_text (const char *text)
{
  g_autofree char *nfc = g_utf8_normalize (text, -1, G_NORMALIZE_NFC);
  GString *out = g_string_new (nfc);

  for (guint i = 0; i < G_N_ELEMENTS (quote_forms); i++)
    g_string_replace (out, quote_forms[i].from, quote_forms[i].to, 0);
  return g_strstrip (g_string_free (out, FALSE));
}

static gboolean
is_space (char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static gboolean
ends_word (char c)
{
  return c == '\0' || is_space (c) || strchr (".,;:!?)", c) != NULL;
}

static Tokens *
tokenize (const char  *text,
          GError     **error)
{
  g_autoptr(GArray) tokens = g_array_new (FALSE, TRUE, sizeof (Token));
  const char *p = text;
  Tokens *toks;

  g_array_set_clear_func (tokens, token_clear);
  while (*p != '\0')
    {
      Token token = { NULL, FALSE };

      if (is_space (*p))
        {
          p++;
          continue;
        }

      if (*p == '"')
        {
          GString *s = g_string_new (NULL);

          p++;
          while (*p != '\0' && *p != '"')
            {
              if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
                p++;
              g_string_append_c (s, *p++);
            }
          if (*p != '"')
            {
              g_string_free (s, TRUE);
              g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                                   "a quote is not closed; write names and values in "
                                   "matching quotes, for example: click \"Sign in\"");
              return NULL;
            }
          p++;
          token.text = g_string_free (s, FALSE);
          token.quoted = TRUE;
        }
      else if (*p == '\'')
        {
          /* A single quote quotes only when a closing one ends a word;
           * otherwise it is an apostrophe. */
          const char *close = NULL;

          for (const char *q = p + 1; *q != '\0'; q++)
            if (*q == '\'' && ends_word (q[1]))
              {
                close = q;
                break;
              }
          if (close != NULL)
            {
              token.text = g_strndup (p + 1, close - p - 1);
              token.quoted = TRUE;
              p = close + 1;
            }
        }

      if (token.text == NULL)
        {
          const char *start = p;
          gsize len;

          while (*p != '\0' && !is_space (*p) && *p != '"')
            p++;
          len = p - start;
          /* A comma ends a clause; it never belongs to a word. */
          while (len > 0 && start[len - 1] == ',')
            len--;
          if (len == 0)
            continue;
          token.text = g_strndup (start, len);
        }
      else
        {
          /* Punctuation glued to a closing quote: "Save", */
          while (*p == ',' || *p == ';')
            p++;
        }

      g_array_append_val (tokens, token);
    }

  /* A full stop or "!" ends the sentence; it is not part of the last word. */
  if (tokens->len > 0)
    {
      Token *last = &g_array_index (tokens, Token, tokens->len - 1);

      if (!last->quoted)
        {
          gsize len = strlen (last->text);

          while (len > 0 && strchr (".!", last->text[len - 1]) != NULL)
            last->text[--len] = '\0';
          if (len == 0)
            g_array_remove_index (tokens, tokens->len - 1);
        }
    }

  toks = g_new0 (Tokens, 1);
  toks->n = tokens->len;
  toks->tokens = g_steal_pointer (&tokens);
  return toks;
}

/* Whether token @i is the unquoted keyword @word. */
static gboolean
kw (Tokens     *t,
    guint       i,
    guint       end,
    const char *word)
{
  if (i >= end || i >= t->n)
    return FALSE;
  if (TOK (t, i)->quoted)
    return FALSE;
  return g_ascii_strcasecmp (TOK (t, i)->text, word) == 0;
}

/* Matches the space-separated keywords of @words at @i; returns how many
 * tokens matched, or 0. */
static guint
kws (Tokens     *t,
     guint       i,
     guint       end,
     const char *words)
{
  g_auto(GStrv) parts = g_strsplit (words, " ", -1);
  guint n = 0;

  for (; parts[n] != NULL; n++)
    if (!kw (t, i + n, end, parts[n]))
      return 0;
  return n;
}

/* Matches the first of the "|"-separated phrases of @alternatives at @i. */
static guint
kw_any (Tokens     *t,
        guint       i,
        guint       end,
        const char *alternatives)
{
  g_auto(GStrv) alts = g_strsplit (alternatives, "|", -1);

  for (guint a = 0; alts[a] != NULL; a++)
    {
      guint n = kws (t, i, end, alts[a]);

      if (n > 0)
        return n;
    }
  return 0;
}

/* The last index in [@from, @end) where one of @alternatives matches. */
static gboolean
find_kw_last (Tokens     *t,
              guint       from,
              guint       end,
              const char *alternatives,
              guint      *at,
              guint      *len)
{
  for (guint i = end; i > from; i--)
    {
      guint n = kw_any (t, i - 1, end, alternatives);

      if (n > 0)
        {
          *at = i - 1;
          *len = n;
          return TRUE;
        }
    }
  return FALSE;
}

static gboolean
find_kw_first (Tokens     *t,
               guint       from,
               guint       end,
               const char *alternatives,
               guint      *at,
               guint      *len)
{
  for (guint i = from; i < end; i++)
    {
      guint n = kw_any (t, i, end, alternatives);

      if (n > 0)
        {
          *at = i;
          *len = n;
          return TRUE;
        }
    }
  return FALSE;
}

static char *
join (Tokens *t,
      guint   from,
      guint   end)
{
  GString *s = g_string_new (NULL);

  for (guint i = from; i < end; i++)
    {
      if (s->len > 0)
        g_string_append_c (s, ' ');
      g_string_append (s, TOK (t, i)->text);
    }
  return g_string_free (s, FALSE);
}

/* Role hints: the words people use for a kind of control, and ARIA's own
 * role names, each to the role it stands for. Longer phrases first. */
static const struct {
  const char *words;
  const char *role;
} role_hints[] = {
  { "radio button", "radio" },
  { "text field", "textbox" },
  { "text box", "textbox" },
  { "text input", "textbox" },
  { "text area", "textbox" },
  { "input field", "textbox" },
  { "input box", "textbox" },
  { "entry field", "textbox" },
  { "search box", "searchbox" },
  { "search field", "searchbox" },
  { "search input", "searchbox" },
  { "check box", "checkbox" },
  { "tick box", "checkbox" },
  { "drop down", "combobox" },
  { "drop-down menu", "combobox" },
  { "dropdown menu", "combobox" },
  { "select box", "combobox" },
  { "combo box", "combobox" },
  { "menu item", "menuitem" },
  { "list item", "listitem" },
  { "spin button", "spinbutton" },
  { "progress bar", "progressbar" },
  { "tree item", "treeitem" },
  { "column header", "columnheader" },
  { "row header", "rowheader" },
  { "button", "button" },
  { "btn", "button" },
  { "link", "link" },
  { "hyperlink", "link" },
  { "field", "textbox" },
  { "input", "textbox" },
  { "textbox", "textbox" },
  { "textarea", "textbox" },
  { "searchbox", "searchbox" },
  { "checkbox", "checkbox" },
  { "tickbox", "checkbox" },
  { "radio", "radio" },
  { "dropdown", "combobox" },
  { "drop-down", "combobox" },
  { "select", "combobox" },
  { "combobox", "combobox" },
  { "listbox", "listbox" },
  { "menuitem", "menuitem" },
  { "option", "option" },
  { "tab", "tab" },
  { "heading", "heading" },
  { "image", "img" },
  { "picture", "img" },
  { "img", "img" },
  { "switch", "switch" },
  { "toggle", "switch" },
  { "slider", "slider" },
  { "spinbutton", "spinbutton" },
  { "progressbar", "progressbar" },
  { "listitem", "listitem" },
  { "treeitem", "treeitem" },
  { "row", "row" },
  { "cell", "cell" },
  { "gridcell", "gridcell" },
  { "columnheader", "columnheader" },
  { "dialog", "dialog" },
  { "modal", "dialog" },
  { "alert", "alert" },
  { "alertdialog", "alertdialog" },
  { "table", "table" },
  { "grid", "grid" },
  { "list", "list" },
  { "tablist", "tablist" },
  { "tabpanel", "tabpanel" },
  { "menu", "menu" },
  { "menubar", "menubar" },
  { "navigation", "navigation" },
  { "region", "region" },
  { "form", "form" },
  { "article", "article" },
  { "banner", "banner" },
  { "paragraph", "paragraph" },
  { "status", "status" },
  { "tooltip", "tooltip" },
};

const char *
sight_role_hint_lookup (const char *words)
{
  g_return_val_if_fail (words != NULL, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (role_hints); i++)
    if (g_ascii_strcasecmp (role_hints[i].words, words) == 0)
      return role_hints[i].role;
  return NULL;
}

/* The hint word written back for a role, for canonical step text. */
static const char *
role_hint_word (const char *role)
{
  static const struct {
    const char *role;
    const char *word;
  } words[] = {
    { "textbox", "field" }, { "searchbox", "search box" }, { "combobox", "dropdown" },
    { "radio", "radio button" }, { "img", "image" }, { "menuitem", "menu item" },
    { "listitem", "list item" }, { "spinbutton", "spin button" },
    { "progressbar", "progress bar" }, { "treeitem", "tree item" },
    { "columnheader", "column header" }, { "rowheader", "row header" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (words); i++)
    if (g_str_equal (words[i].role, role))
      return words[i].word;
  return role;
}

gboolean
sight_role_hint_matches (const char *hint,
                         const char *role)
{
  static const struct {
    const char *hint;
    const char *roles;
  } families[] = {
    { "textbox", "textbox searchbox combobox spinbutton" },
    { "searchbox", "searchbox textbox combobox" },
    { "checkbox", "checkbox switch menuitemcheckbox" },
    { "switch", "switch checkbox" },
    { "radio", "radio menuitemradio" },
    { "combobox", "combobox listbox" },
    { "listbox", "listbox combobox" },
    { "menuitem", "menuitem menuitemcheckbox menuitemradio" },
    { "img", "img image graphics-document" },
    { "dialog", "dialog alertdialog" },
    { "cell", "cell gridcell" },
    { "gridcell", "gridcell cell" },
    { "table", "table grid treegrid" },
  };

  if (hint == NULL)
    return TRUE;
  if (role == NULL)
    return FALSE;
  if (g_ascii_strcasecmp (hint, role) == 0)
    return TRUE;
  for (guint i = 0; i < G_N_ELEMENTS (families); i++)
    if (g_str_equal (families[i].hint, hint))
      {
        g_auto(GStrv) roles = g_strsplit (families[i].roles, " ", -1);

        return g_strv_contains ((const char * const *) roles, role);
      }
  return FALSE;
}

/* Matches a role hint of one to three words at @i. */
static guint
role_hint_at (Tokens      *t,
              guint        i,
              guint        end,
              const char **role)
{
  for (guint len = 3; len >= 1; len--)
    {
      g_autofree char *words = NULL;
      const char *found;
      gboolean quoted = FALSE;

      if (i + len > end)
        continue;
      for (guint k = i; k < i + len; k++)
        quoted |= TOK (t, k)->quoted;
      if (quoted)
        continue;
      words = join (t, i, i + len);
      found = sight_role_hint_lookup (words);
      if (found != NULL)
        {
          *role = found;
          return len;
        }
    }
  return 0;
}

/* A role hint of one to three words ending at @end. */
static guint
role_hint_before (Tokens      *t,
                  guint        from,
                  guint        end,
                  const char **role)
{
  for (guint len = 3; len >= 1; len--)
    if (end >= from + len && role_hint_at (t, end - len, end, role) == len)
      return len;
  return 0;
}

static const char *ordinal_words[] = {
  "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
  "ninth", "tenth",
};

/* Parses "2nd", "3rd", "11th", "second", "last" at @i. */
static gboolean
ordinal_at (Tokens   *t,
            guint     i,
            guint     end,
            gboolean  words_too,
            int      *nth)
{
  const char *text;
  char *rest = NULL;
  guint64 n;

  if (i >= end || TOK (t, i)->quoted)
    return FALSE;
  text = TOK (t, i)->text;
  if (g_ascii_isdigit (text[0]))
    {
      n = g_ascii_strtoull (text, &rest, 10);
      if (n >= 1 && n <= 10000 &&
          (g_ascii_strcasecmp (rest, "st") == 0 || g_ascii_strcasecmp (rest, "nd") == 0 ||
           g_ascii_strcasecmp (rest, "rd") == 0 || g_ascii_strcasecmp (rest, "th") == 0))
        {
          *nth = (int) n;
          return TRUE;
        }
      return FALSE;
    }
  if (!words_too)
    return FALSE;
  if (g_ascii_strcasecmp (text, "last") == 0)
    {
      *nth = -1;
      return TRUE;
    }
  for (guint k = 0; k < G_N_ELEMENTS (ordinal_words); k++)
    if (g_ascii_strcasecmp (text, ordinal_words[k]) == 0)
      {
        *nth = (int) k + 1;
        return TRUE;
      }
  return FALSE;
}

static void
target_clear (SightTarget *target)
{
  g_clear_pointer (&target->role, g_free);
  g_clear_pointer (&target->name, g_free);
  g_clear_pointer (&target->phrase, g_free);
}

static gboolean
fail (GError     **error,
      const char  *format,
      ...) G_GNUC_PRINTF (2, 3);

static gboolean
fail (GError     **error,
      const char  *format,
      ...)
{
  va_list args;
  g_autofree char *message = NULL;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, message);
  return FALSE;
}

/* Words that may sit in a target phrase around a quoted name without
 * changing what it names. */
static gboolean
filler_word (const char *word)
{
  static const char *fillers[] = { "element", "control", "item", "entry", "labelled",
                                   "labeled", "named", "called", "titled", "with",
                                   "label", "text", "name", "the", "that", "says",
                                   "saying", "marked", NULL };

  for (guint i = 0; fillers[i] != NULL; i++)
    if (g_ascii_strcasecmp (word, fillers[i]) == 0)
      return TRUE;
  return FALSE;
}

/* target := [article] [ordinal] ( role-hint? quoted-name role-hint? filler*
 *                               | role-hint (named|labelled|called) name
 *                               | name role-hint | role-hint name | role-hint | name ) */
static gboolean
parse_target (Tokens       *t,
              guint         from,
              guint         end,
              SightTarget  *target,
              GError      **error)
{
  guint i = from;
  const char *role = NULL;
  guint quoted_at = G_MAXUINT, n_quoted = 0, at, len;

  memset (target, 0, sizeof *target);
  i += kw_any (t, i, end, "the|a|an|my|your|this");

  if (ordinal_at (t, i, end, FALSE, &target->nth))
    i++;
  else if (ordinal_at (t, i, end, TRUE, &target->nth))
    {
      /* "first"/"last" only count as an ordinal before a quoted name or a
       * role hint: "the first name field" names a field. */
      const char *r;

      if (i + 1 < end && (TOK (t, i + 1)->quoted || role_hint_at (t, i + 1, end, &r) > 0))
        i++;
      else
        target->nth = 0;
    }
  /* "one" in "the 2nd one"? no: a trailing "one" is a filler */
  if (end > i && kw (t, end - 1, end, "one") && end - 1 > i)
    end--;

  if (i >= end)
    return fail (error, "the step names no target; say what to act on, for example: "
                        "click the \"Sign in\" button");

  target->phrase = join (t, i, end);

  for (guint k = i; k < end; k++)
    if (TOK (t, k)->quoted)
      {
        if (quoted_at == G_MAXUINT)
          quoted_at = k;
        n_quoted++;
      }

  if (n_quoted > 1)
    return fail (error, "the target \"%s\" has more than one quoted name; quote only the "
                        "name, for example: the \"Add to cart\" button", target->phrase);

  if (n_quoted == 1)
    {
      for (guint k = i; k < end; k++)
        {
          guint n;
          const char *r = NULL;

          if (k == quoted_at)
            continue;
          if (ordinal_at (t, k, end, TRUE, &target->nth) && k < quoted_at)
            continue;
          n = role_hint_at (t, k, end, &r);
          if (n > 0)
            {
              if (role != NULL && !g_str_equal (role, r))
                return fail (error, "the target \"%s\" names two kinds of control",
                             target->phrase);
              role = r;
              k += n - 1;
              continue;
            }
          if (filler_word (TOK (t, k)->text))
            continue;
          return fail (error, "could not read the target \"%s\": the word \"%s\" is "
                              "neither a kind of control (button, link, field, checkbox, …) "
                              "nor part of the quoted name", target->phrase, TOK (t, k)->text);
        }
      target->name = g_strdup (TOK (t, quoted_at)->text);
      target->quoted = TRUE;
      target->role = g_strdup (role);
      return TRUE;
    }

  /* role-hint named|labelled|called|with text name */
  if (find_kw_first (t, i, end,
                     "named|called|labelled|labeled|titled|with the text|with text|"
                     "with the label|with label|with the name|with name|that says|saying",
                     &at, &len) &&
      at > i && at + len < end && role_hint_before (t, i, at, &role) == at - i)
    {
      target->role = g_strdup (role);
      target->name = join (t, at + len, end);
      return TRUE;
    }

  /* name role-hint; when the longest hint takes the whole phrase, a shorter
   * one that leaves a name wins: "the Search field" is a field named Search. */
  len = role_hint_before (t, i, end, &role);
  if (len > 1 && end - len == i)
    {
      const char *shorter = NULL;

      for (guint l = len - 1; l >= 1; l--)
        if (role_hint_at (t, end - l, end, &shorter) == l)
          {
            len = l;
            role = shorter;
            break;
          }
    }
  if (len > 0 && end - len > i)
    {
      target->role = g_strdup (role);
      target->name = join (t, i, end - len);
      return TRUE;
    }
  if (len > 0 && end - len == i)
    {
      target->role = g_strdup (role);
      return TRUE;
    }

  /* role-hint name */
  len = role_hint_at (t, i, end, &role);
  if (len > 0 && i + len < end)
    {
      target->role = g_strdup (role);
      target->name = join (t, i + len, end);
      return TRUE;
    }

  target->name = join (t, i, end);
  return TRUE;
}

static gboolean
is_param_token (Token *token)
{
  gsize len = strlen (token->text);

  if (token->quoted || len < 3 || token->text[0] != '{' || token->text[len - 1] != '}')
    return FALSE;
  for (gsize k = 1; k < len - 1; k++)
    if (!g_ascii_isalnum (token->text[k]) && strchr ("_.-", token->text[k]) == NULL)
      return FALSE;
  return TRUE;
}

/* value := quoted | {param} | [article descriptor] words */
static gboolean
parse_value (Tokens           *t,
             guint             from,
             guint             end,
             SightDirectStep  *step,
             const char       *what,
             GError          **error)
{
  guint i = from;
  gboolean article = FALSE;
  guint n;

  if (end == from + 1 && is_param_token (TOK (t, from)))
    {
      const char *text = TOK (t, from)->text;

      step->param = g_strndup (text + 1, strlen (text) - 2);
      return TRUE;
    }

  n = kw_any (t, i, end, "the|a|an|my|our|your");
  if (n > 0)
    {
      article = TRUE;
      i += n;
      n = kw_any (t, i, end,
                  "email address|e-mail address|user name|search term|search query|"
                  "username|user|login|name|email|e-mail|text|value|word|words|phrase|"
                  "query|term|number|code|string|address|message|option|key|file");
      if (n > 0 && i + n < end)
        i += n;
      else
        i = from;
    }

  /* A value with a quoted part: the quoted text is the value. */
  for (guint k = i; k < end; k++)
    if (TOK (t, k)->quoted)
      {
        if (end - i != 1)
          return fail (error, "could not read %s \"%s\"; quote just the %s, for example: "
                              "type \"hello\" into Search", what, TOK (t, k)->text, what);
        step->value = g_strdup (TOK (t, k)->text);
        return TRUE;
      }

  if (i >= end)
    return fail (error, "the step gives no %s", what);

  if (article &&
      kw_any (t, end - 1, end, "password|passcode|passphrase|pin|secret|token|credentials") > 0)
    {
      g_autofree char *phrase = join (t, from, end);

      return fail (error, "\"%s\" describes a secret instead of giving a value: fill "
                          "secrets from a parameter, for example: type {password} into "
                          "Password, with params.password = { \"secret\": \"member.password\" }",
                   phrase);
    }
  step->value = join (t, i, end);
  return TRUE;
}

static const struct {
  const char *name;
  const char *key;
} key_names[] = {
  { "enter", "Enter" }, { "return", "Enter" }, { "esc", "Escape" }, { "escape", "Escape" },
  { "tab", "Tab" }, { "space", "Space" }, { "spacebar", "Space" }, { "space bar", "Space" },
  { "backspace", "Backspace" }, { "back space", "Backspace" }, { "delete", "Delete" },
  { "del", "Delete" }, { "insert", "Insert" }, { "home", "Home" }, { "end", "End" },
  { "pageup", "PageUp" }, { "page up", "PageUp" }, { "pgup", "PageUp" },
  { "pagedown", "PageDown" }, { "page down", "PageDown" }, { "pgdn", "PageDown" },
  { "up", "ArrowUp" }, { "arrowup", "ArrowUp" }, { "arrow up", "ArrowUp" },
  { "up arrow", "ArrowUp" }, { "down", "ArrowDown" }, { "arrowdown", "ArrowDown" },
  { "arrow down", "ArrowDown" }, { "down arrow", "ArrowDown" }, { "left", "ArrowLeft" },
  { "arrowleft", "ArrowLeft" }, { "arrow left", "ArrowLeft" }, { "left arrow", "ArrowLeft" },
  { "right", "ArrowRight" }, { "arrowright", "ArrowRight" }, { "arrow right", "ArrowRight" },
  { "right arrow", "ArrowRight" },
};

static const struct {
  const char *name;
  const char *key;
} modifier_names[] = {
  { "control", "Control" }, { "ctrl", "Control" }, { "shift", "Shift" }, { "alt", "Alt" },
  { "option", "Alt" }, { "meta", "Meta" }, { "cmd", "Meta" }, { "command", "Meta" },
  { "super", "Meta" }, { "win", "Meta" },
};

static const char *
modifier_lookup (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (modifier_names); i++)
    if (g_ascii_strcasecmp (modifier_names[i].name, name) == 0)
      return modifier_names[i].key;
  return NULL;
}

static char *
key_lookup (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (key_names); i++)
    if (g_ascii_strcasecmp (key_names[i].name, name) == 0)
      return g_strdup (key_names[i].key);
  if ((name[0] == 'f' || name[0] == 'F') && g_ascii_isdigit (name[1]))
    {
      guint64 n = g_ascii_strtoull (name + 1, NULL, 10);

      if (n >= 1 && n <= 24 && strspn (name + 1, "0123456789") == strlen (name + 1))
        return g_strdup_printf ("F%u", (guint) n);
    }
  if (g_utf8_strlen (name, -1) == 1 && !is_space (name[0]))
    return g_strdup (name);
  return NULL;
}

char *
sight_key_normalize (const char *text)
{
  g_autofree char *norm = NULL;
  g_auto(GStrv) parts = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  guint n_parts;
  char *s;

  g_return_val_if_fail (text != NULL, NULL);

  norm = g_strstrip (g_strdup (text));
  s = norm;
  if (g_ascii_strncasecmp (s, "the ", 4) == 0)
    s += 4;
  if (g_str_has_suffix (s, " key") || g_str_has_suffix (s, " KEY") || g_str_has_suffix (s, " Key"))
    s[strlen (s) - 4] = '\0';
  if (*s == '\0')
    return NULL;

  /* "+" alone is the plus key, "Control++" is Control and plus. */
  if (g_str_equal (s, "+"))
    return g_strdup ("+");
  parts = g_strsplit (s, "+", -1);
  n_parts = g_strv_length (parts);
  if (n_parts >= 2 && parts[n_parts - 1][0] == '\0' && parts[n_parts - 2][0] == '\0')
    {
      g_free (parts[n_parts - 2]);
      parts[n_parts - 2] = g_strdup ("+");
      g_clear_pointer (&parts[n_parts - 1], g_free);
      n_parts--;
    }

  for (guint i = 0; i < n_parts; i++)
    {
      g_autofree char *part = g_strstrip (g_strdup (parts[i]));
      const char *modifier = modifier_lookup (part);

      if (*part == '\0')
        return NULL;
      if (out->len > 0)
        g_string_append_c (out, '+');
      if (i + 1 < n_parts)
        {
          if (modifier == NULL)
            return NULL;
          g_string_append (out, modifier);
        }
      else if (modifier != NULL)
        g_string_append (out, modifier);
      else
        {
          g_autofree char *key = key_lookup (part);

          if (key == NULL)
            return NULL;
          /* A letter in a chord reads as its capital, as people write it. */
          if (n_parts > 1 && strlen (key) == 1)
            key[0] = g_ascii_toupper (key[0]);
          g_string_append (out, key);
        }
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static gboolean
parse_url (Tokens           *t,
           guint             from,
           guint             end,
           SightDirectStep  *step,
           GError          **error)
{
  g_autofree char *text = NULL;

  from += kw_any (t, from, end, "the url|url|the page|page|the address|address");
  if (end != from + 1)
    {
      text = join (t, from, end);
      return fail (error, "\"%s\" is not a URL; give an address (https://example.com/login, "
                          "or a path like /login), or use a click for a link: click the "
                          "Pricing link", text);
    }
  text = g_strdup (TOK (t, from)->text);
  if (!(g_str_has_prefix (text, "http://") || g_str_has_prefix (text, "https://") ||
        g_str_has_prefix (text, "/") || g_str_has_prefix (text, "about:") ||
        g_str_has_prefix (text, "data:") || g_str_has_prefix (text, "?") ||
        g_str_has_prefix (text, "#") ||
        (strchr (text, '.') != NULL && strchr (text, ' ') == NULL && g_ascii_isalnum (text[0]))))
    return fail (error, "\"%s\" is not a URL; give an address (https://example.com/login, "
                        "or a path like /login), or use a click for a link: click the "
                        "\"%s\" link", text, text);
  step->value = g_steal_pointer (&text);
  return TRUE;
}

/* "Saved" | text "Saved" | the text "Saved" */
static gboolean
parse_text (Tokens           *t,
            guint             from,
            guint             end,
            gboolean          text_keyword_before,
            SightDirectStep  *step,
            GError          **error)
{
  guint n = kw_any (t, from, end, "the text|the words|the message|text|words|message");

  from += n;
  if (from >= end)
    return fail (error, "the step gives no text to look for; quote it, for example: "
                        "expect text \"Welcome\"");
  if (end == from + 1 && TOK (t, from)->quoted)
    {
      step->value = g_strdup (TOK (t, from)->text);
      return TRUE;
    }
  for (guint k = from; k < end; k++)
    if (TOK (t, k)->quoted)
      {
        g_autofree char *phrase = join (t, from, end);

        return fail (error, "could not read the text \"%s\"; quote just the text, for "
                            "example: expect text \"Welcome\"", phrase);
      }
  /* Bare words are a text only right after "text": "the page shows a trial
   * badge" is a judgment for a model, not a string to find. */
  if (n == 0 && !text_keyword_before)
    {
      g_autofree char *phrase = join (t, from, end);

      return fail (error, "\"%s\" is not quoted; quote the exact text to look for (expect "
                          "text \"Welcome\"), or use an assert step for a judgment", phrase);
    }
  step->value = join (t, from, end);
  return TRUE;
}

/* "X to have", "X should have": the verb's helpers are not part of X. */
static guint
trim_copulas (Tokens *t,
              guint   from,
              guint   end)
{
  while (end > from + 1 && kw_any (t, end - 1, end, "to|is|does|do|should|must|will") > 0)
    end--;
  return end;
}

static gboolean
parse_state_expectation (Tokens           *t,
                         guint             from,
                         guint             end,
                         SightDirectStep  *step,
                         GError          **error)
{
  static const struct {
    const char      *words;
    SightExpectKind  kind;
    SightExpectKind  negated;
  } states[] = {
    { "visible|shown|displayed|present|on the page|on screen|on the screen|exists|exist|"
      "appears|appear|there", SIGHT_EXPECT_VISIBLE, SIGHT_EXPECT_HIDDEN },
    { "hidden|invisible|absent|gone|not there|disappears|disappear|missing",
      SIGHT_EXPECT_HIDDEN, SIGHT_EXPECT_VISIBLE },
    { "unchecked|unticked|unselected|deselected|not selected", SIGHT_EXPECT_UNCHECKED,
      SIGHT_EXPECT_CHECKED },
    { "checked|ticked|selected|on", SIGHT_EXPECT_CHECKED, SIGHT_EXPECT_UNCHECKED },
    { "disabled|greyed out|grayed out|inactive|read-only|readonly", SIGHT_EXPECT_DISABLED,
      SIGHT_EXPECT_ENABLED },
    { "enabled|active|clickable|editable", SIGHT_EXPECT_ENABLED, SIGHT_EXPECT_DISABLED },
  };
  guint at, len;

  /* X has value "v" | X to have (the) value "v" | the value of X is "v" */
  if (kws (t, from, end, "the value of") || kws (t, from, end, "value of"))
    {
      guint start = from + kw_any (t, from, end, "the value of|value of");

      if (find_kw_last (t, start, end, "to be|equals|is|=", &at, &len) && at > start)
        {
          step->expect = SIGHT_EXPECT_VALUE;
          step->has_target = TRUE;
          if (!parse_target (t, start, at, &step->target, error))
            return FALSE;
          return parse_value (t, at + len, end, step, "value", error);
        }
    }
  if (find_kw_last (t, from, end,
                    "to have the value|to have value|has the value|has value|have value|"
                    "with the value|with value|value to be|value is|value equals|value =",
                    &at, &len) && at > from)
    {
      step->expect = SIGHT_EXPECT_VALUE;
      step->has_target = TRUE;
      if (!parse_target (t, from, trim_copulas (t, from, at), &step->target, error))
        return FALSE;
      return parse_value (t, at + len, end, step, "value", error);
    }
  if (find_kw_last (t, from, end,
                    "to have the text|to have text|has the text|has text|have text|"
                    "to contain the text|to contain text|contains the text|contains text|"
                    "to contain|contains|to include|includes|to read|reads|to say|says|"
                    "to show|shows",
                    &at, &len) && at > from)
    {
      step->expect = SIGHT_EXPECT_HAS_TEXT;
      step->has_target = TRUE;
      if (!parse_target (t, from, trim_copulas (t, from, at), &step->target, error))
        return FALSE;
      return parse_text (t, at + len, end, kw (t, at + len - 1, at + len, "text"), step, error);
    }

  for (guint s = 0; s < G_N_ELEMENTS (states); s++)
    {
      g_auto(GStrv) alts = g_strsplit (states[s].words, "|", -1);

      for (guint a = 0; alts[a] != NULL; a++)
        {
          g_auto(GStrv) words = g_strsplit (alts[a], " ", -1);
          guint n = g_strv_length (words);
          guint stem;
          gboolean negated = FALSE;

          if (end < from + n + 1 || kws (t, end - n, end, alts[a]) != n)
            continue;
          stem = end - n;
          /* copulas and negations before the state */
          for (;;)
            {
              if (stem > from + 1 &&
                  (kw_any (t, stem - 1, stem, "not|isn't|aren't|doesn't|don't|never|no") > 0))
                {
                  negated = !negated;
                  stem--;
                  continue;
                }
              if (stem > from + 1 &&
                  kw_any (t, stem - 1, stem, "is|are|be|to|does|do|should|must|will|being|"
                                             "stays|remains|become|becomes") > 0)
                {
                  stem--;
                  continue;
                }
              break;
            }
          step->expect = negated ? states[s].negated : states[s].kind;
          step->has_target = TRUE;
          return parse_target (t, from, stem, &step->target, error);
        }
    }

  {
    g_autofree char *phrase = join (t, from, end);

    return fail (error, "could not read the expectation \"%s\"; write one of: expect text "
                        "\"Welcome\", expect no text \"Error\", expect URL contains /home, "
                        "expect the \"Save\" button visible|hidden|checked|disabled, "
                        "expect the Email field has value \"a@b.c\"", phrase);
  }
}

static gboolean
parse_expectation (Tokens           *t,
                   guint             from,
                   guint             end,
                   SightDirectStep  *step,
                   GError          **error)
{
  guint n, at, len;

  step->verb = SIGHT_DIRECT_EXPECT;
  from += kw_any (t, from, end, "that");

  if (from >= end)
    return fail (error, "the expectation is empty; for example: expect text \"Welcome\"");

  /* text present or absent */
  if ((n = kw_any (t, from, end,
                   "no text|not text|no|not to see|to not see|not see|doesn't see|does not see|"
                   "never to see|the page not to show|the page to not show|"
                   "the page not to contain|the page to not contain|the page does not show|"
                   "the page does not contain|the page doesn't show|"
                   "the page doesn't contain|page not to show|page to not show|"
                   "page not to contain|page does not contain|page doesn't contain|"
                   "the page shows no|page shows no|nothing says")) > 0)
    {
      step->expect = SIGHT_EXPECT_NO_TEXT;
      return parse_text (t, from + n, end, kw (t, from + n - 1, end, "text"), step, error);
    }
  if ((n = kw_any (t, from, end,
                   "text|to see|see|the page to show|the page to contain|"
                   "the page to display|the page to include|the page to have|"
                   "the page shows|the page contains|the page displays|the page has|"
                   "the page includes|page to show|page to contain|page shows|"
                   "page contains|page has|page displays")) > 0)
    {
      step->expect = SIGHT_EXPECT_TEXT;
      return parse_text (t, from + n, end, kw (t, from + n - 1, end, "text"), step, error);
    }

  /* the URL */
  if ((n = kw_any (t, from, end,
                   "the page url|the current url|the url|url|the address|the location|"
                   "the page address|address|location")) > 0)
    {
      guint rest = from + n;

      if ((len = kw_any (t, rest, end,
                         "to contain|contains|to include|includes|has|to have|"
                         "to end with|ends with|to match|matches")) > 0)
        step->expect = SIGHT_EXPECT_URL_CONTAINS;
      else if ((len = kw_any (t, rest, end, "to be|to equal|equals|is|=")) > 0)
        step->expect = SIGHT_EXPECT_URL_EQUALS;
      else
        return fail (error, "could not read the URL expectation; write: expect URL contains "
                            "/dashboard, or expect URL is https://example.com/");
      rest += len;
      if (rest + 1 != end)
        return fail (error, "give one URL or URL part, for example: expect URL contains "
                            "/dashboard");
      step->value = g_strdup (TOK (t, rest)->text);
      return TRUE;
    }

  /* a quoted text alone, possibly followed by "to appear" / "not to appear" */
  if (end == from + 1 && TOK (t, from)->quoted)
    {
      step->expect = SIGHT_EXPECT_TEXT;
      step->value = g_strdup (TOK (t, from)->text);
      return TRUE;
    }
  if (TOK (t, from)->quoted &&
      find_kw_first (t, from + 1, end, "is on the page|to be on the page|on the page|"
                                       "appears on the page|is shown on the page", &at, &len) &&
      at == from + 1 && at + len == end)
    {
      step->expect = SIGHT_EXPECT_TEXT;
      step->value = g_strdup (TOK (t, from)->text);
      return TRUE;
    }

  return parse_state_expectation (t, from, end, step, error);
}

/* "into T" / "in T" after a value; returns the index where the target
 * preposition starts, or @end when there is none. */
static guint
split_value_target (Tokens     *t,
                    guint       from,
                    guint       end,
                    const char *prepositions,
                    guint      *target_from)
{
  guint at, len;

  /* A quoted or {param} value is one token: the preposition follows it. */
  if (from < end && (TOK (t, from)->quoted || is_param_token (TOK (t, from))))
    {
      len = kw_any (t, from + 1, end, prepositions);
      if (len > 0)
        {
          *target_from = from + 1 + len;
          return from + 1;
        }
    }
  /* Otherwise the first choice of @prepositions wins, at its last place. */
  {
    g_auto(GStrv) alts = g_strsplit (prepositions, "|", -1);

    for (guint a = 0; alts[a] != NULL; a++)
      if (find_kw_last (t, from + 1, end, alts[a], &at, &len))
        {
          *target_from = at + len;
          return at;
        }
  }
  *target_from = end;
  return end;
}

static gboolean
parse_target_opt (Tokens           *t,
                  guint             from,
                  guint             end,
                  SightDirectStep  *step,
                  GError          **error)
{
  if (from >= end)
    return TRUE;
  step->has_target = TRUE;
  return parse_target (t, from, end, &step->target, error);
}

static gboolean
parse_wait (Tokens           *t,
            guint             from,
            guint             end,
            SightDirectStep  *step,
            GError          **error)
{
  guint i = from, n;
  double amount;
  char *rest = NULL;

  i += kw_any (t, i, end, "for|until|till");

  /* wait 2 seconds | wait for 500 ms */
  if (i < end && !TOK (t, i)->quoted && g_ascii_isdigit (TOK (t, i)->text[0]))
    {
      const char *unit;

      amount = g_ascii_strtod (TOK (t, i)->text, &rest);
      unit = (rest != NULL && *rest != '\0') ? rest : (i + 1 < end ? TOK (t, i + 1)->text : "");
      if (amount > 0 && amount <= 600000 &&
          (i + 1 == end || (i + 2 == end && *rest == '\0') || (*rest != '\0' && i + 1 == end)))
        {
          double ms;

          if (g_ascii_strcasecmp (unit, "ms") == 0 ||
              g_ascii_strcasecmp (unit, "millisecond") == 0 ||
              g_ascii_strcasecmp (unit, "milliseconds") == 0)
            ms = amount;
          else if (*unit == '\0' || g_ascii_strcasecmp (unit, "s") == 0 ||
                   g_ascii_strcasecmp (unit, "sec") == 0 ||
                   g_ascii_strcasecmp (unit, "secs") == 0 ||
                   g_ascii_strcasecmp (unit, "second") == 0 ||
                   g_ascii_strcasecmp (unit, "seconds") == 0)
            ms = amount * 1000;
          else
            return fail (error, "unknown unit \"%s\"; write: wait 2 seconds, or wait 500 ms",
                         unit);
          if (ms > 600000)
            return fail (error, "a wait is at most 600 seconds");
          step->verb = SIGHT_DIRECT_WAIT_TIME;
          step->value = g_strdup_printf ("%u", (guint) (ms + 0.5));
          return TRUE;
        }
    }

  step->verb = SIGHT_DIRECT_WAIT_FOR_TEXT;
  step->expect = SIGHT_EXPECT_TEXT;
  if ((n = kw_any (t, i, end, "the text|text|the words|the message")) > 0)
    i += n;

  /* trailing "to appear" / "appears" / "to disappear" / "is gone" */
  {
    guint at, len;

    if (find_kw_last (t, i + 1, end,
                      "to disappear|disappears|to vanish|vanishes|to go away|goes away|"
                      "to be gone|is gone|to be hidden|is hidden|not to be visible|"
                      "to not be visible|is no longer visible|is no longer shown|to be removed",
                      &at, &len) && at + len == end)
      {
        step->expect = SIGHT_EXPECT_NO_TEXT;
        end = at;
      }
    else if (find_kw_last (t, i + 1, end,
                           "to appear|appears|to be visible|is visible|to show up|shows up|"
                           "to be shown|is shown|to load|loads|is displayed|to be displayed",
                           &at, &len) && at + len == end)
      end = at;
  }
  if (i >= end)
    return fail (error, "say what to wait for: wait for text \"Saved\", or wait 2 seconds");
  if (end == i + 1 && TOK (t, i)->quoted)
    {
      step->value = g_strdup (TOK (t, i)->text);
      return TRUE;
    }
  {
    g_autofree char *phrase = join (t, i, end);

    for (guint k = i; k < end; k++)
      if (TOK (t, k)->quoted)
        return fail (error, "could not read \"%s\"; quote just the text: wait for text "
                            "\"Saved\"", phrase);
    /* An unquoted condition is text only after "text"; anything else is a
     * condition for a model (waitFor), not a direct step. */
    if (n == 0)
      return fail (error, "\"%s\" is a condition, not a text; quote the text to wait for "
                          "(wait for \"Saved\") or use a waitFor step", phrase);
    step->value = g_steal_pointer (&phrase);
  }
  return TRUE;
}

static gboolean
parse_scroll (Tokens           *t,
              guint             from,
              guint             end,
              SightDirectStep  *step,
              GError          **error)
{
  guint i = from, n, at, len;

  step->verb = SIGHT_DIRECT_SCROLL;
  i += kw_any (t, i, end, "the page|page|the window|window");

  if ((n = kw_any (t, i, end, "to the top|to top|all the way up|up to the top")) > 0 &&
      i + n == end)
    {
      step->scroll = SIGHT_SCROLL_TOP;
      return TRUE;
    }
  if ((n = kw_any (t, i, end, "to the bottom|to bottom|to the end|all the way down|"
                              "down to the bottom")) > 0 && i + n == end)
    {
      step->scroll = SIGHT_SCROLL_BOTTOM;
      return TRUE;
    }
  if ((n = kw_any (t, i, end, "down|up")) > 0)
    {
      step->scroll = kw (t, i, end, "down") ? SIGHT_SCROLL_DOWN : SIGHT_SCROLL_UP;
      i += n;
      if (i == end)
        return TRUE;
      if ((n = kw_any (t, i, end, "to|until")) > 0 && i + n < end)
        {
          step->scroll = SIGHT_SCROLL_TO_TARGET;
          return parse_target_opt (t, i + n, end, step, error);
        }
      i += kw_any (t, i, end, "by");
      if (i < end && !TOK (t, i)->quoted)
        {
          char *rest = NULL;
          guint64 px = g_ascii_strtoull (TOK (t, i)->text, &rest, 10);

          if (px > 0 && px <= 100000 &&
              (*rest == '\0' || g_ascii_strcasecmp (rest, "px") == 0) &&
              (i + 1 == end || (i + 2 == end && kw_any (t, i + 1, end, "px|pixels|pixel"))))
            {
              step->amount = (int) px;
              return TRUE;
            }
          if (kw_any (t, i, end, "a page|one page|a bit|a little") == end - i)
            return TRUE;
        }
      return fail (error, "could not read how far to scroll; write: scroll down, scroll "
                          "down 500 pixels, scroll to the bottom, or scroll to the Footer link");
    }
  if ((n = kw_any (t, i, end, "to")) > 0 && i + n < end)
    {
      step->scroll = SIGHT_SCROLL_TO_TARGET;
      return parse_target_opt (t, i + n, end, step, error);
    }
  if (find_kw_last (t, i + 1, end, "into view|into sight", &at, &len) && at + len == end)
    {
      step->scroll = SIGHT_SCROLL_TO_TARGET;
      return parse_target_opt (t, i, at, step, error);
    }
  return fail (error, "could not read the scroll; write: scroll down, scroll up, scroll to "
                      "the top, scroll to the bottom, or scroll to the \"Footer\" link");
}

static gboolean
parse_press (Tokens           *t,
             guint             from,
             guint             end,
             SightDirectStep  *step,
             GError          **error)
{
  guint target_from = end, key_end = end, at, len;
  g_autofree char *key_text = NULL;
  g_autofree char *key = NULL;

  if (from >= end)
    return fail (error, "say which key to press: press Enter, press Control+A");

  if (find_kw_first (t, from + 1, end, "in|into|on|inside|while in|while focused on", &at, &len) &&
      at + len < end)
    {
      key_end = at;
      target_from = at + len;
    }
  key_text = join (t, from, key_end);
  key = sight_key_normalize (key_text);
  if (key == NULL)
    {
      /* "press the Submit button" is a click */
      step->verb = SIGHT_DIRECT_CLICK;
      step->has_target = TRUE;
      return parse_target (t, from, end, &step->target, error);
    }
  step->verb = SIGHT_DIRECT_PRESS;
  step->value = g_steal_pointer (&key);
  return parse_target_opt (t, target_from, end, step, error);
}

/* The step without its lead-in: "then", "please", "and", "now". */
static guint
skip_lead_in (Tokens *t,
              guint   end)
{
  guint i = 0;

  for (;;)
    {
      guint n = kw_any (t, i, end, "then|please|and|now|next|finally|also|afterwards|"
                                   "i|we|the user|user");

      if (n == 0 || i + n >= end)
        return i;
      i += n;
    }
}

SightDirectStep *
sight_direct_step_parse (const char  *text,
                         GError     **error)
{
  g_autoptr(SightDirectStep) step = NULL;
  g_autoptr(Tokens) t = NULL;
  g_autofree char *norm = NULL;
  guint i, end, n, target_from, value_end;
  gboolean ok = FALSE;

  g_return_val_if_fail (text != NULL, NULL);

  if (!g_utf8_validate (text, -1, NULL))
    {
      fail (error, "the step is not valid UTF-8");
      return NULL;
    }
  if (strlen (text) > 8192)
    {
      fail (error, "a step is at most 8192 bytes");
      return NULL;
    }

  norm = normalize_text (text);
  t = tokenize (norm, error);
  if (t == NULL)
    return NULL;
  if (t->n == 0)
    {
      fail (error, "the step is empty; write what to do, for example: click Sign in");
      return NULL;
    }

  step = g_new0 (SightDirectStep, 1);
  step->source = g_strdup (text);
  end = t->n;
  i = skip_lead_in (t, end);

  if ((n = kw_any (t, i, end, "double-click on|double-click|double click on|double click|"
                              "doubleclick on|doubleclick|dblclick on|dblclick|"
                              "double-tap on|double-tap|double tap on|double tap|"
                              "double-clicks on|double-clicks|double clicks on|"
                              "double clicks")) > 0)
    {
      step->verb = SIGHT_DIRECT_DOUBLE_CLICK;
      step->has_target = TRUE;
      ok = parse_target (t, i + n, end, &step->target, error);
    }
  else if ((n = kw_any (t, i, end, "click on|click|clicks on|clicks|tap on|tap|taps on|taps|"
                                   "hit|follow|activate|open the link|press on")) > 0)
    {
      step->verb = SIGHT_DIRECT_CLICK;
      step->has_target = TRUE;
      ok = parse_target (t, i + n, end, &step->target, error);
    }
  else if ((n = kw_any (t, i, end, "hover over|hover on|hover|hovers over|hovers|mouse over|"
                                   "mouseover|move the mouse over|move the mouse to|"
                                   "move mouse over|move the pointer over|point at")) > 0)
    {
      step->verb = SIGHT_DIRECT_HOVER;
      step->has_target = TRUE;
      ok = parse_target (t, i + n, end, &step->target, error);
    }
  else if ((n = kw_any (t, i, end, "press|presses|push|hit the key|key")) > 0)
    ok = parse_press (t, i + n, end, step, error);
  else if ((n = kw_any (t, i, end, "type in|types in|type|types|enter|enters|input|write|"
                                   "key in|put")) > 0)
    {
      step->verb = SIGHT_DIRECT_FILL;
      i += n;
      if (i >= end)
        {
          fail (error, "say what to type: type \"qa@example.com\" into Email");
          return NULL;
        }
      value_end = split_value_target (t, i, end, "into|in|in to|to", &target_from);
      ok = parse_value (t, i, value_end, step, "value", error) &&
           parse_target_opt (t, target_from, end, step, error);
    }
  else if ((n = kw_any (t, i, end, "fill in|fill out|fill|fills in|fills|complete")) > 0)
    {
      guint at, len;

      step->verb = SIGHT_DIRECT_FILL;
      i += n;
      /* fill T with V: a quoted target ends at its quote */
      if (!find_kw_first (t, i + 1, end, "with", &at, &len) || at + len >= end)
        {
          fail (error, "say what to fill in: fill Email with \"qa@example.com\"");
          return NULL;
        }
      step->has_target = TRUE;
      ok = parse_target (t, i, at, &step->target, error) &&
           parse_value (t, at + len, end, step, "value", error);
    }
  else if ((n = kw_any (t, i, end, "clear|clears|empty")) > 0)
    {
      step->verb = SIGHT_DIRECT_FILL;
      step->value = g_strdup ("");
      step->has_target = TRUE;
      ok = parse_target (t, i + n, end, &step->target, error);
    }
  else if ((n = kw_any (t, i, end, "set")) > 0)
    {
      guint at, len;

      step->verb = SIGHT_DIRECT_FILL;
      i += n;
      if (!find_kw_last (t, i + 1, end, "to", &at, &len) || at + len >= end)
        {
          fail (error, "say what to set: set Quantity to \"3\"");
          return NULL;
        }
      step->has_target = TRUE;
      ok = parse_target (t, i, at, &step->target, error) &&
           parse_value (t, at + len, end, step, "value", error);
    }
  else if ((n = kw_any (t, i, end, "select|selects|choose|chooses|pick|picks")) > 0)
    {
      i += n;
      value_end = split_value_target (t, i, end, "from|in|on|for|of|within", &target_from);
      if (target_from < end)
        {
          step->verb = SIGHT_DIRECT_SELECT;
          ok = parse_value (t, i, value_end, step, "option", error) &&
               parse_target_opt (t, target_from, end, step, error);
        }
      else
        {
          /* "select Pro" picks a radio, tab or option by name; a checkbox
           * is checked. */
          step->verb = SIGHT_DIRECT_CLICK;
          step->has_target = TRUE;
          ok = parse_target (t, i, end, &step->target, error);
          if (ok && step->target.role != NULL &&
              sight_role_hint_matches ("checkbox", step->target.role))
            step->verb = SIGHT_DIRECT_CHECK;
        }
    }
  else if ((n = kw_any (t, i, end, "check that|checks that|check if|check whether|verify|"
                                   "verify that|verifies that|assert|assert that|"
                                   "expect|expects|expect that|ensure|ensure that|"
                                   "make sure|make sure that|confirm|confirm that|"
                                   "should see|should not see|see")) > 0)
    {
      /* "should see X" reads as "to see X" */
      if (kws (t, i, end, "should see") || kws (t, i, end, "see"))
        n--;
      if (kws (t, i, end, "should not see"))
        {
          step->verb = SIGHT_DIRECT_EXPECT;
          step->expect = SIGHT_EXPECT_NO_TEXT;
          ok = parse_text (t, i + n, end, FALSE, step, error);
        }
      else if (kws (t, i, end, "should see") || kws (t, i, end, "see"))
        {
          step->verb = SIGHT_DIRECT_EXPECT;
          step->expect = SIGHT_EXPECT_TEXT;
          ok = parse_text (t, i + n + 1, end, FALSE, step, error);
        }
      else
        ok = parse_expectation (t, i + n, end, step, error);
    }
  else if ((n = kw_any (t, i, end, "uncheck|unchecks|untick|unticks|deselect|unselect")) > 0)
    {
      step->verb = SIGHT_DIRECT_UNCHECK;
      step->has_target = TRUE;
      ok = parse_target (t, i + n, end, &step->target, error);
    }
  else if ((n = kw_any (t, i, end, "check|checks|tick|ticks|toggle on")) > 0)
    {
      step->verb = SIGHT_DIRECT_CHECK;
      step->has_target = TRUE;
      ok = parse_target (t, i + n, end, &step->target, error);
    }
  else if ((n = kw_any (t, i, end, "upload|uploads|attach|attaches")) > 0)
    {
      step->verb = SIGHT_DIRECT_UPLOAD;
      i += n;
      value_end = split_value_target (t, i, end, "to|into|in|on|for|using|with|via",
                                      &target_from);
      ok = parse_value (t, i, value_end, step, "file", error) &&
           parse_target_opt (t, target_from, end, step, error);
    }
  else if ((n = kw_any (t, i, end, "go back|navigate back|goes back|back|browser back")) > 0 &&
           i + n == end)
    {
      step->verb = SIGHT_DIRECT_BACK;
      ok = TRUE;
    }
  else if ((n = kw_any (t, i, end, "go forward|navigate forward|forward")) > 0 && i + n == end)
    {
      step->verb = SIGHT_DIRECT_FORWARD;
      ok = TRUE;
    }
  else if ((n = kw_any (t, i, end, "reload the page|refresh the page|reload page|"
                                   "refresh page|reload|refresh|reloads")) > 0 && i + n == end)
    {
      step->verb = SIGHT_DIRECT_RELOAD;
      ok = TRUE;
    }
  else if ((n = kw_any (t, i, end, "go to|goes to|goto|navigate to|navigates to|open|opens|"
                                   "visit|visits|browse to|load|loads")) > 0)
    {
      step->verb = SIGHT_DIRECT_GOTO;
      if (i + n >= end)
        {
          fail (error, "say where to go: go to https://example.com/login");
          return NULL;
        }
      ok = parse_url (t, i + n, end, step, error);
    }
  else if ((n = kw_any (t, i, end, "scroll|scrolls")) > 0)
    ok = parse_scroll (t, i + n, end, step, error);
  else if ((n = kw_any (t, i, end, "wait|waits")) > 0)
    ok = parse_wait (t, i + n, end, step, error);
  else
    {
      g_autofree char *first = sight_text_sanitize (TOK (t, i)->text, 64);

      fail (error, "\"%s\" is not a direct step verb; start with click, double-click, hover, "
                   "type, fill, press, select, check, uncheck, upload, go to, back, reload, "
                   "scroll, wait for or expect", first);
      return NULL;
    }

  if (!ok)
    return NULL;
  return g_steal_pointer (&step);
}

void
sight_direct_step_free (SightDirectStep *step)
{
  if (step == NULL)
    return;
  target_clear (&step->target);
  g_free (step->value);
  g_free (step->param);
  g_free (step->source);
  g_free (step);
}

static void
append_quoted (GString    *s,
               const char *text)
{
  g_string_append_c (s, '"');
  for (const char *p = text; *p != '\0'; p++)
    {
      if (*p == '"' || *p == '\\')
        g_string_append_c (s, '\\');
      g_string_append_c (s, *p);
    }
  g_string_append_c (s, '"');
}

static void
append_target (GString           *s,
               const SightTarget *target)
{
  g_string_append (s, "the ");
  if (target->nth == -1)
    g_string_append (s, "last ");
  else if (target->nth > 0)
    {
      int n = target->nth;
      const char *suffix = "th";

      if (n % 100 < 11 || n % 100 > 13)
        suffix = n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
      g_string_append_printf (s, "%d%s ", n, suffix);
    }
  if (target->name != NULL)
    append_quoted (s, target->name);
  /* a role no hint word stands for ("generic") is left out: the name says it */
  if (target->role != NULL && sight_role_hint_lookup (role_hint_word (target->role)) != NULL)
    {
      if (target->name != NULL)
        g_string_append_c (s, ' ');
      g_string_append (s, role_hint_word (target->role));
    }
  else if (target->name == NULL)
    g_string_append (s, "element");
}

static const char * const field_roles[] = {
  "textbox", "searchbox", "combobox", "spinbutton", NULL,
};
static const char * const choice_roles[] = { "combobox", "listbox", NULL };
static const char * const check_roles[] = {
  "checkbox", "switch", "radio", "menuitemcheckbox", "menuitemradio", "option", NULL,
};
static const char * const checked_state_roles[] = {
  "checkbox", "switch", "radio", "menuitemcheckbox", "menuitemradio", "option", "tab", "button",
  NULL,
};
static const char * const value_roles[] = {
  "textbox", "searchbox", "combobox", "spinbutton", "slider", "listbox", NULL,
};

/* Each verb once: the page action it performs (-1: none, it observes), the
 * roles it acts on when the step gives no role hint (NULL: any; CONTROLS: the
 * controls a click, a double click, a press or an upload looks for,
 * sight_action_control_roles(), which the exporter's control() helper and
 * tap_at use too) and, for a verb that takes no value, its canonical words
 * (the target follows them when the verb acts on one). */
static const char * const controls_mark[] = { NULL };
#define CONTROLS controls_mark
static const struct {
  int                 action;   /* SightActionKind */
  const char * const *roles;
  const char         *words;
} verbs[] = {
  [SIGHT_DIRECT_CLICK]         = { SIGHT_ACTION_CLICK, CONTROLS, "click" },
  [SIGHT_DIRECT_DOUBLE_CLICK]  = { SIGHT_ACTION_DOUBLE_CLICK, CONTROLS, "double-click" },
  [SIGHT_DIRECT_HOVER]         = { SIGHT_ACTION_HOVER, NULL, "hover over" },
  [SIGHT_DIRECT_FILL]          = { SIGHT_ACTION_FILL, field_roles, NULL },
  [SIGHT_DIRECT_PRESS]         = { SIGHT_ACTION_PRESS, CONTROLS, NULL },
  [SIGHT_DIRECT_SELECT]        = { SIGHT_ACTION_SELECT, choice_roles, NULL },
  [SIGHT_DIRECT_CHECK]         = { SIGHT_ACTION_CHECK, check_roles, "check" },
  [SIGHT_DIRECT_UNCHECK]       = { SIGHT_ACTION_UNCHECK, check_roles, "uncheck" },
  [SIGHT_DIRECT_UPLOAD]        = { SIGHT_ACTION_UPLOAD, CONTROLS, NULL },
  [SIGHT_DIRECT_GOTO]          = { SIGHT_ACTION_NAVIGATE, NULL, NULL },
  [SIGHT_DIRECT_BACK]          = { SIGHT_ACTION_BACK, NULL, "go back" },
  [SIGHT_DIRECT_FORWARD]       = { SIGHT_ACTION_FORWARD, NULL, "go forward" },
  [SIGHT_DIRECT_RELOAD]        = { SIGHT_ACTION_RELOAD, NULL, "reload" },
  [SIGHT_DIRECT_SCROLL]        = { SIGHT_ACTION_SCROLL, NULL, NULL },
  [SIGHT_DIRECT_WAIT_FOR_TEXT] = { -1, NULL, NULL },
  [SIGHT_DIRECT_WAIT_TIME]     = { SIGHT_ACTION_WAIT, NULL, NULL },
  [SIGHT_DIRECT_EXPECT]        = { -1, NULL, NULL },
};

gboolean
sight_direct_verb_to_action (SightDirectVerb  verb,
                             SightActionKind *out_kind)
{
  if ((guint) verb >= G_N_ELEMENTS (verbs) || verbs[verb].action < 0)
    return FALSE;
  if (out_kind != NULL)
    *out_kind = verbs[verb].action;
  return TRUE;
}

gboolean
sight_direct_verb_from_action (SightActionKind  kind,
                               SightDirectVerb *out_verb)
{
  for (guint i = 0; i < G_N_ELEMENTS (verbs); i++)
    if (verbs[i].action == (int) kind)
      {
        if (out_verb != NULL)
          *out_verb = i;
        return TRUE;
      }
  return FALSE;
}

const char * const *
sight_direct_control_roles (void)
{
  return sight_action_control_roles ();
}

static void
append_value (GString               *s,
              const SightDirectStep *step)
{
  if (step->param != NULL)
    g_string_append_printf (s, "{%s}", step->param);
  else
    append_quoted (s, step->value != NULL ? step->value : "");
}

char *
sight_direct_step_to_text (const SightDirectStep *step)
{
  GString *s = g_string_new (NULL);

  g_return_val_if_fail (step != NULL, NULL);

  if ((guint) step->verb < G_N_ELEMENTS (verbs) && verbs[step->verb].words != NULL)
    {
      g_string_append (s, verbs[step->verb].words);
      if (sight_action_kind_is_page_action (verbs[step->verb].action))
        {
          g_string_append_c (s, ' ');
          append_target (s, &step->target);
        }
      return g_string_free (s, FALSE);
    }
  switch (step->verb)
    {
    case SIGHT_DIRECT_FILL:
      if (step->param == NULL && (step->value == NULL || step->value[0] == '\0') &&
          step->has_target)
        {
          g_string_append (s, "clear ");
          append_target (s, &step->target);
          break;
        }
      g_string_append (s, "type ");
      append_value (s, step);
      if (step->has_target)
        {
          g_string_append (s, " into ");
          append_target (s, &step->target);
        }
      break;
    case SIGHT_DIRECT_PRESS:
      g_string_append_printf (s, "press %s", step->value);
      if (step->has_target)
        {
          g_string_append (s, " in ");
          append_target (s, &step->target);
        }
      break;
    case SIGHT_DIRECT_SELECT:
      g_string_append (s, "select ");
      append_value (s, step);
      g_string_append (s, " in ");
      append_target (s, &step->target);
      break;
    case SIGHT_DIRECT_UPLOAD:
      g_string_append (s, "upload ");
      append_value (s, step);
      if (step->has_target)
        {
          g_string_append (s, " to ");
          append_target (s, &step->target);
        }
      break;
    case SIGHT_DIRECT_GOTO:
      g_string_append_printf (s, "go to %s", step->value);
      break;
    case SIGHT_DIRECT_SCROLL:
      switch (step->scroll)
        {
        case SIGHT_SCROLL_UP:
        case SIGHT_SCROLL_DOWN:
          g_string_append (s, step->scroll == SIGHT_SCROLL_UP ? "scroll up" : "scroll down");
          if (step->amount > 0)
            g_string_append_printf (s, " %d pixels", step->amount);
          break;
        case SIGHT_SCROLL_TOP:
          g_string_append (s, "scroll to the top");
          break;
        case SIGHT_SCROLL_BOTTOM:
          g_string_append (s, "scroll to the bottom");
          break;
        case SIGHT_SCROLL_TO_TARGET:
        case SIGHT_SCROLL_NONE:
        default:
          g_string_append (s, "scroll to ");
          append_target (s, &step->target);
          break;
        }
      break;
    case SIGHT_DIRECT_WAIT_FOR_TEXT:
      g_string_append (s, "wait for text ");
      append_quoted (s, step->value);
      if (step->expect == SIGHT_EXPECT_NO_TEXT)
        g_string_append (s, " to disappear");
      break;
    case SIGHT_DIRECT_WAIT_TIME:
      g_string_append_printf (s, "wait %s ms", step->value);
      break;
    case SIGHT_DIRECT_EXPECT:
    default:
      g_string_append (s, "expect ");
      switch (step->expect)
        {
        case SIGHT_EXPECT_TEXT:
          g_string_append (s, "text ");
          append_quoted (s, step->value);
          break;
        case SIGHT_EXPECT_NO_TEXT:
          g_string_append (s, "no text ");
          append_quoted (s, step->value);
          break;
        case SIGHT_EXPECT_URL_CONTAINS:
          g_string_append_printf (s, "URL contains %s", step->value);
          break;
        case SIGHT_EXPECT_URL_EQUALS:
          g_string_append_printf (s, "URL is %s", step->value);
          break;
        case SIGHT_EXPECT_VALUE:
          append_target (s, &step->target);
          g_string_append (s, " has value ");
          append_value (s, step);
          break;
        case SIGHT_EXPECT_HAS_TEXT:
          append_target (s, &step->target);
          g_string_append (s, " has text ");
          append_quoted (s, step->value);
          break;
        case SIGHT_EXPECT_NONE:
        case SIGHT_EXPECT_VISIBLE:
        case SIGHT_EXPECT_HIDDEN:
        case SIGHT_EXPECT_CHECKED:
        case SIGHT_EXPECT_UNCHECKED:
        case SIGHT_EXPECT_ENABLED:
        case SIGHT_EXPECT_DISABLED:
        default:
          append_target (s, &step->target);
          g_string_append_printf (s, " %s", sight_expect_kind_to_string (step->expect));
          break;
        }
      break;
    }
  return g_string_free (s, FALSE);
}

const char *
sight_direct_verb_to_string (SightDirectVerb verb)
{
  return sight_enum_to_nick (SIGHT_TYPE_DIRECT_VERB, verb);
}

const char *
sight_expect_kind_to_string (SightExpectKind kind)
{
  return sight_enum_to_nick (SIGHT_TYPE_EXPECT_KIND, kind);
}

char *
sight_target_describe (const SightTarget *target)
{
  GString *s = g_string_new (NULL);

  append_target (s, target);
  return g_string_free (s, FALSE);
}

/* Whitespace-collapsed, trimmed copy; casefolded when @fold. */
static char *
name_key (const char *name,
          gboolean    fold)
{
  GString *s = g_string_new (NULL);
  gboolean space = FALSE;

  if (name == NULL)
    return g_string_free (s, FALSE);
  for (const char *p = name; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (g_unichar_isspace (c) || c == 0xa0)
        {
          space = s->len > 0;
          continue;
        }
      if (space)
        g_string_append_c (s, ' ');
      space = FALSE;
      g_string_append_unichar (s, c);
    }
  if (fold)
    {
      g_autofree char *folded = g_utf8_casefold (s->str, -1);

      g_string_free (s, TRUE);
      return g_steal_pointer (&folded);
    }
  return g_string_free (s, FALSE);
}

/* The roles a step acts on when it gives no role hint. */
static const char * const *
verb_roles (const SightDirectStep *step)
{
  if (step->verb == SIGHT_DIRECT_EXPECT)
    {
      if (step->expect == SIGHT_EXPECT_CHECKED || step->expect == SIGHT_EXPECT_UNCHECKED)
        return checked_state_roles;
      if (step->expect == SIGHT_EXPECT_VALUE)
        return value_roles;
      return NULL;
    }
  if ((guint) step->verb >= G_N_ELEMENTS (verbs))
    return NULL;
  return verbs[step->verb].roles == CONTROLS ? sight_action_control_roles ()
                                             : verbs[step->verb].roles;
}

static gboolean
role_in (const char * const *roles,
         const char         *role)
{
  if (roles == NULL)
    return TRUE;
  if (role == NULL)
    return FALSE;
  return g_strv_contains (roles, role);
}

typedef enum {
  MATCH_EXACT,
  MATCH_FOLDED,
  MATCH_SUBSTRING,
  N_MATCH_TIERS,
} MatchTier;

/* Candidates for one tier, in document order. */
static GArray *
collect (const SightNodeView *nodes,
         guint                n_nodes,
         const char          *role_hint,
         const char * const  *roles,
         const char          *name,
         MatchTier            tier)
{
  GArray *found = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autofree char *want = name_key (name, tier != MATCH_EXACT);

  for (guint i = 0; i < n_nodes; i++)
    {
      g_autofree char *have = NULL;
      gboolean ok;

      if (role_hint != NULL ? !sight_role_hint_matches (role_hint, nodes[i].role)
                            : !role_in (roles, nodes[i].role))
        continue;
      if (name == NULL)
        ok = tier == MATCH_EXACT;
      else
        {
          have = name_key (nodes[i].name, tier != MATCH_EXACT);
          if (tier == MATCH_SUBSTRING)
            ok = *want != '\0' && strstr (have, want) != NULL;
          else
            ok = g_str_equal (have, want);
        }
      if (ok)
        g_array_append_val (found, i);
    }
  return found;
}

/* Drops a candidate inside another whose name holds its name: the image
 * of a link named by its alt, the heading of a card link, one thing named
 * twice because the outer name came from the content. The outer one is
 * what a person names. */
static void
drop_nested (GArray              *found,
             const SightNodeView *nodes,
             guint                n_nodes,
             MatchTier            tier)
{
  g_autofree char *around = NULL;   /* the outer candidate's name key */
  guint end = 0;                     /* where its subtree ends */

  for (guint k = 0; k < found->len; k++)
    {
      guint i = g_array_index (found, guint, k);
      g_autofree char *have = name_key (nodes[i].name, tier != MATCH_EXACT);

      if (around != NULL && i < end && *have != '\0' && strstr (around, have) != NULL)
        {
          g_array_remove_index (found, k--);
          continue;
        }
      g_free (around);
      around = g_steal_pointer (&have);
      for (end = i + 1; end < n_nodes && nodes[end].depth > nodes[i].depth; end++)
        ;
    }
}

/* Drops hidden candidates when some are visible: a person names what they
 * see, and pages keep hidden copies (a closed mobile menu). */
static void
prefer_visible (GArray              *found,
                const SightNodeView *nodes)
{
  guint n_visible = 0;

  for (guint k = 0; k < found->len; k++)
    if (!(nodes[g_array_index (found, guint, k)].states & SIGHT_NODE_HIDDEN))
      n_visible++;
  if (n_visible == 0 || n_visible == found->len)
    return;
  for (guint k = found->len; k > 0; k--)
    if (nodes[g_array_index (found, guint, k - 1)].states & SIGHT_NODE_HIDDEN)
      g_array_remove_index (found, k - 1);
}

static void
append_candidate (GString             *s,
                  const SightNodeView *node)
{
  g_autofree char *name = sight_text_sanitize (node->name != NULL ? node->name : "", 80);

  g_string_append_printf (s, "%s %s \"%s\"", node->ref != NULL ? node->ref : "?",
                          node->role != NULL ? node->role : "generic", name);
}

typedef struct {
  const char         *role_hint;
  const char * const *roles;
  const char         *name;
} Pass;

/* Finds candidates, trying the tiers in order, then the role families and
 * the hint-free reading of the phrase. */
static GArray *
find_candidates (const SightDirectStep *step,
                 const SightNodeView   *nodes,
                 guint                  n_nodes)
{
  const SightTarget *target = &step->target;
  const char * const *roles = verb_roles (step);
  Pass passes[4];
  guint n_passes = 0;

  passes[n_passes++] = (Pass) { target->role, roles, target->name };
  if (target->role == NULL && roles != NULL)
    /* no control of the verb's kind has that name: any role will do */
    passes[n_passes++] = (Pass) { NULL, NULL, target->name };
  if (target->role != NULL && !target->quoted && target->phrase != NULL &&
      g_strcmp0 (target->phrase, target->name) != 0)
    /* "click Add link" on a button named "Add link": the last word was part
     * of the name, not a role hint */
    passes[n_passes++] = (Pass) { NULL, roles, target->phrase };
  if (target->role != NULL &&
      (g_str_equal (target->role, "button") || g_str_equal (target->role, "link")))
    /* links styled as buttons and the reverse */
    passes[n_passes++] = (Pass) {
      g_str_equal (target->role, "button") ? "link" : "button", NULL, target->name };

  for (guint p = 0; p < n_passes; p++)
    for (MatchTier tier = MATCH_EXACT; tier < N_MATCH_TIERS; tier++)
      {
        GArray *found = collect (nodes, n_nodes, passes[p].role_hint, passes[p].roles,
                                 passes[p].name, tier);

        if (found->len > 0)
          {
            if (passes[p].name != NULL)
              drop_nested (found, nodes, n_nodes, tier);
            return found;
          }
        g_array_unref (found);
        if (passes[p].name == NULL)
          break;
      }
  return g_array_new (FALSE, FALSE, sizeof (guint));
}

gboolean
sight_direct_step_resolve (const SightDirectStep *step,
                           const SightNodeView   *nodes,
                           guint                  n_nodes,
                           guint                 *out_index,
                           GError               **error)
{
  g_autoptr(GArray) found = NULL;
  g_autofree char *what = NULL;
  const SightTarget *target;

  g_return_val_if_fail (step != NULL, FALSE);
  g_return_val_if_fail (out_index != NULL, FALSE);

  target = &step->target;
  what = sight_target_describe (target);
  if (!step->has_target)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "the step \"%s\" names no target", step->source != NULL ? step->source : "");
      return FALSE;
    }

  found = find_candidates (step, nodes, n_nodes);
  if (step->verb != SIGHT_DIRECT_EXPECT || step->expect != SIGHT_EXPECT_HIDDEN)
    prefer_visible (found, nodes);

  if (found->len == 0)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED,
                   "nothing on the page matches %s", what);
      return FALSE;
    }

  if (target->nth != 0)
    {
      guint k;

      if (target->nth == -1)
        k = found->len - 1;
      else if ((guint) target->nth <= found->len)
        k = target->nth - 1;
      else
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED,
                       "%s does not exist: %u element%s match%s", what, found->len,
                       found->len == 1 ? "" : "s", found->len == 1 ? "es" : "");
          return FALSE;
        }
      *out_index = g_array_index (found, guint, k);
      return TRUE;
    }

  if (found->len > 1)
    {
      g_autoptr(GString) s = g_string_new (NULL);
      SightTarget second = *target;
      g_autofree char *example = NULL;

      g_string_append_printf (s, "%s is ambiguous: %u elements match (", what, found->len);
      for (guint k = 0; k < found->len && k < 10; k++)
        {
          if (k > 0)
            g_string_append (s, ", ");
          append_candidate (s, &nodes[g_array_index (found, guint, k)]);
        }
      if (found->len > 10)
        g_string_append_printf (s, ", and %u more", found->len - 10);
      second.nth = 2;
      example = sight_target_describe (&second);
      g_string_append_printf (s, "); say which one, for example: %s", example);
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED, s->str);
      return FALSE;
    }

  *out_index = g_array_index (found, guint, 0);
  return TRUE;
}

struct _SightNodeList {
  SightObservation *observation;
  GArray           *nodes;   /* SightNodeView */
  GPtrArray        *owned;   /* texts computed here */
};

/* Appends the text inside @node (names of descendants and text runs). */
static void
collect_text (JsonObject *node,
              GString    *text)
{
  JsonArray *children;

  if (!json_object_has_member (node, "children"))
    return;
  children = json_object_get_array_member (node, "children");
  for (guint i = 0; children != NULL && i < json_array_get_length (children); i++)
    {
      JsonNode *child_node = json_array_get_element (children, i);
      JsonObject *child;
      const char *piece;

      if (!JSON_NODE_HOLDS_OBJECT (child_node))
        continue;
      child = json_node_get_object (child_node);
      piece = json_object_get_string_member_with_default (child, "text", NULL);
      if (piece == NULL)
        piece = json_object_get_string_member_with_default (child, "name", NULL);
      if (piece != NULL && *piece != '\0' && text->len < 4096)
        {
          if (text->len > 0)
            g_string_append_c (text, ' ');
          g_string_append (text, piece);
        }
      collect_text (child, text);
    }
}

static gboolean
json_flag (JsonObject *node,
           const char *member)
{
  JsonNode *value = json_object_get_member (node, member);

  return value != NULL && JSON_NODE_HOLDS_VALUE (value) &&
         json_node_get_value_type (value) == G_TYPE_BOOLEAN && json_node_get_boolean (value);
}

static gboolean
json_mixed (JsonObject *node,
            const char *member)
{
  JsonNode *value = json_object_get_member (node, member);

  return value != NULL && JSON_NODE_HOLDS_VALUE (value) &&
         json_node_get_value_type (value) == G_TYPE_STRING &&
         g_strcmp0 (json_node_get_string (value), "mixed") == 0;
}

static void
flatten_node (SightNodeList *list,
              JsonObject    *node,
              guint          depth)
{
  const char *role = json_object_get_string_member_with_default (node, "role", NULL);
  JsonArray *children = NULL;

  if (role != NULL && json_object_has_member (node, "ref"))
    {
      SightNodeView view = { 0 };
      GString *text = g_string_new (json_object_get_string_member_with_default (node, "name", ""));

      view.ref = json_object_get_string_member_with_default (node, "ref", NULL);
      view.role = role;
      view.name = json_object_get_string_member_with_default (node, "name", NULL);
      view.value = json_object_get_string_member_with_default (node, "value", NULL);
      if (json_flag (node, "checked") || json_flag (node, "selected") || json_flag (node, "pressed"))
        view.states |= SIGHT_NODE_CHECKED;
      if (json_mixed (node, "checked") || json_mixed (node, "pressed"))
        view.states |= SIGHT_NODE_MIXED;
      if (json_flag (node, "disabled"))
        view.states |= SIGHT_NODE_DISABLED;
      if (json_flag (node, "focused"))
        view.states |= SIGHT_NODE_FOCUSED;
      if (json_flag (node, "expanded"))
        view.states |= SIGHT_NODE_EXPANDED;
      if (json_flag (node, "secure"))
        view.states |= SIGHT_NODE_SECURE;
      collect_text (node, text);
      view.text = text->str;
      view.depth = depth++;
      g_ptr_array_add (list->owned, g_string_free (text, FALSE));
      g_array_append_val (list->nodes, view);
    }

  if (json_object_has_member (node, "children") &&
      JSON_NODE_HOLDS_ARRAY (json_object_get_member (node, "children")))
    children = json_object_get_array_member (node, "children");
  for (guint i = 0; children != NULL && i < json_array_get_length (children); i++)
    {
      JsonNode *child = json_array_get_element (children, i);

      if (JSON_NODE_HOLDS_OBJECT (child))
        flatten_node (list, json_node_get_object (child), depth);
    }
}

SightNodeList *
sight_node_list_new (SightObservation *observation)
{
  SightNodeList *list = g_new0 (SightNodeList, 1);
  JsonNode *tree;

  g_return_val_if_fail (SIGHT_IS_OBSERVATION (observation), NULL);

  list->observation = g_object_ref (observation);
  list->nodes = g_array_new (FALSE, TRUE, sizeof (SightNodeView));
  list->owned = g_ptr_array_new_with_free_func (g_free);
  tree = sight_observation_get_tree (observation);
  if (tree != NULL && JSON_NODE_HOLDS_OBJECT (tree))
    flatten_node (list, json_node_get_object (tree), 0);
  return list;
}

const SightNodeView *
sight_node_list_get (SightNodeList *list,
                     guint         *n_nodes)
{
  *n_nodes = list->nodes->len;
  return (const SightNodeView *) (gpointer) list->nodes->data;
}

void
sight_node_list_free (SightNodeList *list)
{
  if (list == NULL)
    return;
  g_array_unref (list->nodes);
  g_ptr_array_unref (list->owned);
  g_object_unref (list->observation);
  g_free (list);
}
