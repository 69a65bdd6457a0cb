/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-export"

#include "config.h"

#include "sight-export.h"

#include <string.h>

#include "sight-agent-enums.h"
#include "sight-direct-step.h"
#include "sight-enum.h"
#include "sight-error.h"
#include "sight-json.h"
#include "sight-params.h"
#include "sight-trace-cache.h"

typedef struct {
  SightExportFormat  format;
  GString           *body;
  char              *base_url;
  gboolean           uses_control;
  gboolean           uses_zod;
  /* the traces of act steps (NULL: none) and whose agent they are */
  SightProject      *project;
  SightTraceCache   *traces;
  const char        *test_agent;
  /* 'step N (kind "instruction"): why', one for each step that became
   * test.fixme */
  GPtrArray         *fixme;
} Emitter;

gboolean
sight_export_format_from_string (const char        *name,
                                 SightExportFormat *out)
{
  int value;

  if (!sight_enum_from_nick (SIGHT_TYPE_EXPORT_FORMAT, name, &value))
    return FALSE;
  *out = value;
  return TRUE;
}

/* A TypeScript single-quoted string literal. */
static void
append_js_string (GString    *s,
                  const char *text)
{
  g_string_append_c (s, '\'');
  for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      switch (c)
        {
        case '\'': g_string_append (s, "\\'"); break;
        case '\\': g_string_append (s, "\\\\"); break;
        case '\n': g_string_append (s, "\\n"); break;
        case '\r': g_string_append (s, "\\r"); break;
        case '\t': g_string_append (s, "\\t"); break;
        default:
          if (c < 0x20 || c == 0x2028 || c == 0x2029 || c == 0x7f)
            g_string_append_printf (s, "\\u%04x", c);
          else
            g_string_append_unichar (s, c);
        }
    }
  g_string_append_c (s, '\'');
}

static char *
js_string (const char *text)
{
  GString *s = g_string_new (NULL);

  append_js_string (s, text);
  return g_string_free (s, FALSE);
}

/* A regular expression literal matching @text literally. */
static char *
js_regex_literal (const char *text)
{
  GString *s = g_string_new ("/");

  for (const char *p = text; *p != '\0'; p++)
    {
      if (strchr ("\\^$.*+?()[]{}|/", *p) != NULL)
        g_string_append_c (s, '\\');
      if (*p == '\n')
        g_string_append (s, "\\n");
      else
        g_string_append_c (s, *p);
    }
  g_string_append_c (s, '/');
  return g_string_free (s, FALSE);
}

/* A comment line; text that could end the comment cannot, as it is a line
 * comment and newlines are folded. */
static void
append_comment (GString    *s,
                const char *indent,
                const char *text)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    g_string_append_printf (s, "%s// %s\n", indent, lines[i]);
}

static char *
json_compact (JsonNode *node)
{
  return json_to_string (node, FALSE);
}

/* How a params value reads in the generated code. */
static char *
param_expression (Emitter    *em,
                  JsonNode   *value)
{
  const char *secret = NULL;

  if (sight_params_is_secret (value, &secret))
    {
      const char *dot = strchr (secret, '.');

      if (em->format == SIGHT_EXPORT_E2E && dot != NULL && dot > secret && dot[1] != '\0')
        {
          g_autofree char *user = g_strndup (secret, dot - secret);
          g_autofree char *user_js = js_string (user);

          return g_strdup_printf ("credentials.user(%s).%s", user_js, dot + 1);
        }
      else
        {
          /* Plain Playwright has no credential store: read it from the
           * environment, named after the credential. */
          g_autofree char *var = g_ascii_strup (secret, -1);

          for (char *p = var; *p != '\0'; p++)
            if (!g_ascii_isalnum (*p))
              *p = '_';
          return g_strdup_printf ("process.env.SIGHTLINE_SECRET_%s ?? ''", var);
        }
    }
  if (JSON_NODE_HOLDS_VALUE (value) && json_node_get_value_type (value) == G_TYPE_STRING)
    return js_string (json_node_get_string (value));
  return json_compact (value);
}

/* The value typed from params entry @param, as an expression (a string);
 * NULL when @params lack it. */
static char *
param_value_expression (Emitter    *em,
                        JsonObject *params,
                        const char *param)
{
  JsonNode *value = params != NULL ? json_object_get_member (params, param) : NULL;
  g_autofree char *expr = NULL;

  if (value == NULL)
    return NULL;
  expr = param_expression (em, value);
  if (!sight_params_is_secret (value, NULL) &&
      !(JSON_NODE_HOLDS_VALUE (value) && json_node_get_value_type (value) == G_TYPE_STRING))
    return g_strdup_printf ("String(%s)", expr);
  return g_steal_pointer (&expr);
}

/* The value a direct step types, as an expression. */
static gboolean
value_expression (Emitter                *em,
                  const SightDirectStep  *step,
                  JsonObject             *params,
                  char                  **out,
                  GError                **error)
{
  if (step->param == NULL)
    {
      *out = js_string (step->value != NULL ? step->value : "");
      return TRUE;
    }
  *out = param_value_expression (em, params, step->param);
  if (*out == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "the step \"%s\" uses {%s}, which its params do not define",
                   step->source, step->param);
      return FALSE;
    }
  return TRUE;
}

/* The control() helper: the roles are the resolver's (sight-direct-step.c),
 * in its order, so an exported "click Sign in" finds what Sightline's does. */
static void
append_control_helper (GString *s)
{
  const char * const *roles = sight_direct_control_roles ();
  const char *indent = "  const roles = [";
  gsize line_start = s->len;

  g_string_append (s,
    "// A control with this accessible name, whatever its role: how Sightline resolves a\n"
    "// target written without a kind (\"click Sign in\").\n"
    "function control(page: Page, name: string, exact = false): Locator {\n");
  line_start = s->len;
  g_string_append (s, indent);
  for (guint i = 0; roles[i] != NULL; i++)
    {
      g_autofree char *item = g_strdup_printf ("'%s'%s", roles[i],
                                               roles[i + 1] != NULL ? "," : "] as const;");

      if (i > 0 && s->len - line_start + 1 + strlen (item) > 90)
        {
          g_string_append_c (s, '\n');
          line_start = s->len;
          g_string_append_printf (s, "%*s", (int) strlen (indent), "");
        }
      else if (i > 0)
        g_string_append_c (s, ' ');
      g_string_append (s, item);
    }
  g_string_append (s,
    "\n"
    "  return roles.map((role) => page.getByRole(role, { name, exact }))\n"
    "              .reduce((all, one) => all.or(one));\n"
    "}\n\n");
}

/* What a locator's target is for: a control acted on, a field its label
 * names, or text expected on the page. */
typedef enum {
  TARGET_CONTROL,
  TARGET_FIELD,
  TARGET_TEXT,
} TargetUse;

/* The one locator builder of the export, for direct steps and cached actions
 * alike: by role and accessible name, by role alone, or, with no role, a
 * field by its label, a text, or any control by its name (control()); then
 * which of several alike: @nth is 1-based, -1 the last, 0 the only one. */
static char *
build_locator (Emitter    *em,
               const char *role,
               const char *name,
               gboolean    exact,
               int         nth,
               TargetUse   use)
{
  g_autoptr(GString) s = g_string_new ("page.");
  g_autofree char *name_js = name != NULL ? js_string (name) : NULL;
  const char *exact_option = exact ? ", exact: true" : "";
  const char *exact_arg = exact ? ", { exact: true }" : "";

  if (role != NULL && name_js != NULL && g_str_equal (role, "textbox") && use == TARGET_FIELD)
    /* A password input has no ARIA role, so Playwright's getByRole misses
     * it; its label finds every kind of field. */
    g_string_append_printf (s, "getByLabel(%s%s)", name_js, exact_arg);
  else if (role != NULL && name_js != NULL)
    g_string_append_printf (s, "getByRole('%s', { name: %s%s })", role, name_js, exact_option);
  else if (role != NULL)
    g_string_append_printf (s, "getByRole('%s')", role);
  else if (use == TARGET_FIELD)
    g_string_append_printf (s, "getByLabel(%s%s)", name_js, exact_arg);
  else if (use == TARGET_TEXT)
    g_string_append_printf (s, "getByText(%s%s)", name_js, exact_arg);
  else
    {
      em->uses_control = TRUE;
      g_string_truncate (s, 0);
      g_string_append_printf (s, "control(page, %s%s)", name_js, exact ? ", true" : "");
    }

  if (nth == -1)
    g_string_append (s, ".last()");
  else if (nth > 0)
    g_string_append_printf (s, ".nth(%d)", nth - 1);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static char *
locator_for (Emitter               *em,
             const SightDirectStep *step)
{
  const SightTarget *target = &step->target;
  TargetUse use = TARGET_CONTROL;

  switch (step->verb)
    {
    case SIGHT_DIRECT_FILL:
      use = TARGET_FIELD;
      break;
    case SIGHT_DIRECT_SELECT:
    case SIGHT_DIRECT_CHECK:
    case SIGHT_DIRECT_UNCHECK:
    case SIGHT_DIRECT_UPLOAD:
      /* by label when written without a kind */
      use = target->role == NULL ? TARGET_FIELD : TARGET_CONTROL;
      break;
    case SIGHT_DIRECT_EXPECT:
      if (step->expect == SIGHT_EXPECT_VALUE)
        use = TARGET_FIELD;
      else if (step->expect == SIGHT_EXPECT_CHECKED || step->expect == SIGHT_EXPECT_UNCHECKED)
        use = target->role == NULL ? TARGET_FIELD : TARGET_CONTROL;
      else
        use = TARGET_TEXT;
      break;
    case SIGHT_DIRECT_CLICK:
    case SIGHT_DIRECT_DOUBLE_CLICK:
    case SIGHT_DIRECT_HOVER:
    case SIGHT_DIRECT_PRESS:
    case SIGHT_DIRECT_GOTO:
    case SIGHT_DIRECT_BACK:
    case SIGHT_DIRECT_FORWARD:
    case SIGHT_DIRECT_RELOAD:
    case SIGHT_DIRECT_SCROLL:
    case SIGHT_DIRECT_WAIT_FOR_TEXT:
    case SIGHT_DIRECT_WAIT_TIME:
    default:
      break;
    }
  return build_locator (em, target->role, target->name, target->quoted, target->nth, use);
}

static char *
resolve_url (Emitter    *em,
             const char *url)
{
  g_autoptr(GUri) base = NULL;
  g_autoptr(GUri) joined = NULL;

  if (em->base_url == NULL || g_str_has_prefix (url, "http://") ||
      g_str_has_prefix (url, "https://"))
    return g_strdup (url);
  base = g_uri_parse (em->base_url, G_URI_FLAGS_NONE, NULL);
  if (base == NULL)
    return g_strdup (url);
  if (url[0] != '/' && url[0] != '?' && url[0] != '#' && strchr (url, ':') == NULL)
    {
      /* "example.com/path" is a host, as a person typing it means */
      g_autofree char *with_scheme = g_strconcat ("https://", url, NULL);

      return g_steal_pointer (&with_scheme);
    }
  joined = g_uri_parse_relative (base, url, G_URI_FLAGS_NONE, NULL);
  return joined != NULL ? g_uri_to_string (joined) : g_strdup (url);
}

/* The Playwright call of an action that takes no value, or NULL. */
static const char *
playwright_call (SightActionKind kind)
{
  static const struct {
    SightActionKind  kind;
    const char      *call;
  } calls[] = {
    { SIGHT_ACTION_CLICK, "click" },
    { SIGHT_ACTION_DOUBLE_CLICK, "dblclick" },
    { SIGHT_ACTION_HOVER, "hover" },
    { SIGHT_ACTION_CHECK, "check" },
    { SIGHT_ACTION_UNCHECK, "uncheck" },
    { SIGHT_ACTION_BACK, "goBack" },
    { SIGHT_ACTION_FORWARD, "goForward" },
    { SIGHT_ACTION_RELOAD, "reload" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (calls); i++)
    if (calls[i].kind == kind)
      return calls[i].call;
  return NULL;
}

/* A scroll of the page: a viewport (@amount 0) or @amount pixels down or up,
 * or to its top or bottom. */
static void
append_page_scroll (GString         *b,
                    SightScrollKind  kind,
                    int              amount)
{
  switch (kind)
    {
    case SIGHT_SCROLL_TOP:
      g_string_append (b, "  await page.evaluate(() => window.scrollTo(0, 0));\n");
      break;
    case SIGHT_SCROLL_BOTTOM:
      g_string_append (b, "  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));\n");
      break;
    case SIGHT_SCROLL_DOWN:
    case SIGHT_SCROLL_UP:
    case SIGHT_SCROLL_NONE:
    case SIGHT_SCROLL_TO_TARGET:
    default:
      if (amount > 0)
        g_string_append_printf (b, "  await page.mouse.wheel(0, %s%d);\n",
                                kind == SIGHT_SCROLL_UP ? "-" : "", amount);
      else
        g_string_append_printf (b, "  await page.evaluate(() => window.scrollBy(0, %swindow.innerHeight));\n",
                                kind == SIGHT_SCROLL_UP ? "-" : "");
      break;
    }
}

static gboolean
emit_direct (Emitter     *em,
             JsonObject  *step_object,
             const char  *text,
             guint        index,
             GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(SightDirectStep) step = sight_direct_step_parse (text, &local_error);
  g_autofree char *loc = NULL;
  g_autofree char *value = NULL;
  JsonObject *params = NULL;
  GString *b = em->body;
  SightActionKind kind;
  const char *call;

  if (step == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "step %u: %s", index + 1,
                   local_error->message);
      return FALSE;
    }
  if (json_object_has_member (step_object, "params") &&
      JSON_NODE_HOLDS_OBJECT (json_object_get_member (step_object, "params")))
    params = json_object_get_object_member (step_object, "params");

  append_comment (b, "  ", text);
  if (step->has_target)
    loc = locator_for (em, step);

  if (sight_direct_verb_to_action (step->verb, &kind) && (call = playwright_call (kind)) != NULL)
    {
      /* on the target's locator, or on the page */
      g_string_append_printf (b, "  await %s.%s();\n",
                              sight_action_kind_is_page_action (kind) ? loc : "page", call);
      return TRUE;
    }
  switch (step->verb)
    {
    case SIGHT_DIRECT_FILL:
      if (!value_expression (em, step, params, &value, error))
        return FALSE;
      if (loc != NULL)
        g_string_append_printf (b, "  await %s.fill(%s);\n", loc, value);
      else
        g_string_append_printf (b, "  await page.keyboard.type(%s);\n", value);
      break;
    case SIGHT_DIRECT_PRESS:
      {
        g_autofree char *key = js_string (step->value);

        if (loc != NULL)
          g_string_append_printf (b, "  await %s.press(%s);\n", loc, key);
        else
          g_string_append_printf (b, "  await page.keyboard.press(%s);\n", key);
      }
      break;
    case SIGHT_DIRECT_SELECT:
      if (!value_expression (em, step, params, &value, error))
        return FALSE;
      g_string_append_printf (b, "  await %s.selectOption(%s);\n", loc, value);
      break;
    case SIGHT_DIRECT_UPLOAD:
      if (!value_expression (em, step, params, &value, error))
        return FALSE;
      g_string_append_printf (b, "  await %s.setInputFiles(%s);\n",
                              loc != NULL ? loc : "page.locator('input[type=file]')", value);
      break;
    case SIGHT_DIRECT_GOTO:
      {
        g_autofree char *url = resolve_url (em, step->value);
        g_autofree char *url_js = js_string (url);

        g_string_append_printf (b, "  await page.goto(%s);\n", url_js);
      }
      break;
    case SIGHT_DIRECT_SCROLL:
      if (step->scroll == SIGHT_SCROLL_TO_TARGET || step->scroll == SIGHT_SCROLL_NONE)
        g_string_append_printf (b, "  await %s.scrollIntoViewIfNeeded();\n", loc);
      else
        append_page_scroll (b, step->scroll, step->amount);
      break;
    case SIGHT_DIRECT_WAIT_TIME:
      g_string_append_printf (b, "  await page.waitForTimeout(%s);\n", step->value);
      break;
    case SIGHT_DIRECT_WAIT_FOR_TEXT:
    case SIGHT_DIRECT_EXPECT:
    default:
      {
        g_autofree char *expected = step->value != NULL ? js_string (step->value) : NULL;
        /* Sightline looks for the text in what the page shows (the body's
         * innerText, sight-direct-run.c); Playwright's default, textContent,
         * also holds hidden elements' text */
        const char *options = step->verb == SIGHT_DIRECT_WAIT_FOR_TEXT
                                ? ", { useInnerText: true, timeout: 30000 }"
                                : ", { useInnerText: true }";

        switch (step->expect)
          {
          case SIGHT_EXPECT_TEXT:
            g_string_append_printf (b, "  await expect(page.locator('body')).toContainText(%s%s);\n",
                                    expected, options);
            break;
          case SIGHT_EXPECT_NO_TEXT:
            g_string_append_printf (b, "  await expect(page.locator('body')).not.toContainText(%s%s);\n",
                                    expected, options);
            break;
          case SIGHT_EXPECT_URL_CONTAINS:
            {
              g_autofree char *re = js_regex_literal (step->value);

              g_string_append_printf (b, "  await expect(page).toHaveURL(%s);\n", re);
            }
            break;
          case SIGHT_EXPECT_URL_EQUALS:
            {
              g_autofree char *url = resolve_url (em, step->value);
              g_autofree char *url_js = js_string (url);

              g_string_append_printf (b, "  await expect(page).toHaveURL(%s);\n", url_js);
            }
            break;
          case SIGHT_EXPECT_VISIBLE:
            g_string_append_printf (b, "  await expect(%s).toBeVisible();\n", loc);
            break;
          case SIGHT_EXPECT_HIDDEN:
            g_string_append_printf (b, "  await expect(%s).toBeHidden();\n", loc);
            break;
          case SIGHT_EXPECT_CHECKED:
            g_string_append_printf (b, "  await expect(%s).toBeChecked();\n", loc);
            break;
          case SIGHT_EXPECT_UNCHECKED:
            g_string_append_printf (b, "  await expect(%s).not.toBeChecked();\n", loc);
            break;
          case SIGHT_EXPECT_ENABLED:
            g_string_append_printf (b, "  await expect(%s).toBeEnabled();\n", loc);
            break;
          case SIGHT_EXPECT_DISABLED:
            g_string_append_printf (b, "  await expect(%s).toBeDisabled();\n", loc);
            break;
          case SIGHT_EXPECT_VALUE:
            if (!value_expression (em, step, params, &value, error))
              return FALSE;
            g_string_append_printf (b, "  await expect(%s).toHaveValue(%s);\n", loc, value);
            break;
          case SIGHT_EXPECT_HAS_TEXT:
            g_string_append_printf (b, "  await expect(%s).toContainText(%s);\n", loc, expected);
            break;
          case SIGHT_EXPECT_NONE:
          default:
            g_assert_not_reached ();
          }
      }
      break;
    }
  return TRUE;
}

/* A JSON Schema as zod source, for extract's Standard Schema. Handles the
 * shapes test files use; anything else becomes z.any() with a note. */
static void
append_zod (GString  *s,
            JsonNode *schema)
{
  JsonObject *o;
  const char *type = NULL;

  if (schema == NULL || !JSON_NODE_HOLDS_OBJECT (schema))
    {
      g_string_append (s, "z.any()");
      return;
    }
  o = json_node_get_object (schema);
  if (json_object_has_member (o, "enum") &&
      JSON_NODE_HOLDS_ARRAY (json_object_get_member (o, "enum")))
    {
      JsonArray *values = json_object_get_array_member (o, "enum");
      gboolean all_strings = json_array_get_length (values) > 0;

      for (guint i = 0; i < json_array_get_length (values); i++)
        {
          JsonNode *v = json_array_get_element (values, i);

          all_strings &= JSON_NODE_HOLDS_VALUE (v) && json_node_get_value_type (v) == G_TYPE_STRING;
        }
      if (all_strings)
        {
          g_string_append (s, "z.enum([");
          for (guint i = 0; i < json_array_get_length (values); i++)
            {
              if (i > 0)
                g_string_append (s, ", ");
              append_js_string (s, json_array_get_string_element (values, i));
            }
          g_string_append (s, "])");
          return;
        }
    }
  if (json_object_has_member (o, "type") &&
      JSON_NODE_HOLDS_VALUE (json_object_get_member (o, "type")))
    type = json_object_get_string_member (o, "type");

  if (g_strcmp0 (type, "string") == 0)
    g_string_append (s, "z.string()");
  else if (g_strcmp0 (type, "number") == 0)
    g_string_append (s, "z.number()");
  else if (g_strcmp0 (type, "integer") == 0)
    g_string_append (s, "z.number().int()");
  else if (g_strcmp0 (type, "boolean") == 0)
    g_string_append (s, "z.boolean()");
  else if (g_strcmp0 (type, "null") == 0)
    g_string_append (s, "z.null()");
  else if (g_strcmp0 (type, "array") == 0)
    {
      g_string_append (s, "z.array(");
      append_zod (s, json_object_get_member (o, "items"));
      g_string_append (s, ")");
    }
  else if (g_strcmp0 (type, "object") == 0)
    {
      JsonObject *props = NULL;
      JsonArray *required = NULL;
      g_autoptr(GList) names = NULL;

      if (json_object_has_member (o, "properties") &&
          JSON_NODE_HOLDS_OBJECT (json_object_get_member (o, "properties")))
        props = json_object_get_object_member (o, "properties");
      if (json_object_has_member (o, "required") &&
          JSON_NODE_HOLDS_ARRAY (json_object_get_member (o, "required")))
        required = json_object_get_array_member (o, "required");
      g_string_append (s, "z.object({");
      names = props != NULL ? json_object_get_members (props) : NULL;
      for (GList *l = names; l != NULL; l = l->next)
        {
          const char *name = l->data;
          gboolean is_required = FALSE;

          for (guint i = 0; required != NULL && i < json_array_get_length (required); i++)
            if (g_strcmp0 (json_array_get_string_element (required, i), name) == 0)
              is_required = TRUE;
          g_string_append_c (s, ' ');
          append_js_string (s, name);
          g_string_append (s, ": ");
          append_zod (s, json_object_get_member (props, name));
          if (!is_required)
            g_string_append (s, ".optional()");
          g_string_append_c (s, l->next != NULL ? ',' : ' ');
        }
      g_string_append (s, "})");
    }
  else
    g_string_append (s, "z.any()");
}

/* The options object of a model step, with the spec's names. */
static void
append_options (Emitter    *em,
                GString    *s,
                JsonObject *step,
                const char *kind)
{
  static const char *names[] = { "params", "timeout", "maxSteps", "maxModelCalls", "agent",
                                 "screenshot", "vision", "interval", "schema", NULL };
  gboolean any = FALSE;

  for (guint i = 0; names[i] != NULL; i++)
    {
      JsonNode *value = json_object_get_member (step, names[i]);

      if (value == NULL)
        continue;
      g_string_append (s, any ? ", " : ", { ");
      any = TRUE;
      g_string_append_printf (s, "%s: ", names[i]);
      if (g_str_equal (names[i], "schema") && em->format == SIGHT_EXPORT_E2E)
        {
          em->uses_zod = TRUE;
          append_zod (s, value);
        }
      else if (g_str_equal (names[i], "params") && JSON_NODE_HOLDS_OBJECT (value))
        {
          JsonObject *params = json_node_get_object (value);
          g_autoptr(GList) members = json_object_get_members (params);

          g_string_append (s, "{ ");
          for (GList *l = members; l != NULL; l = l->next)
            {
              g_autofree char *expr = param_expression (em, json_object_get_member (params, l->data));

              append_js_string (s, l->data);
              g_string_append_printf (s, ": %s%s", expr, l->next != NULL ? ", " : " ");
            }
          g_string_append (s, "}");
        }
      else if (JSON_NODE_HOLDS_VALUE (value) && json_node_get_value_type (value) == G_TYPE_STRING)
        append_js_string (s, json_node_get_string (value));
      else
        {
          g_autofree char *json = json_compact (value);

          g_string_append (s, json);
        }
    }
  if (any)
    g_string_append (s, " }");
}

static JsonObject *
object_member (JsonObject *object,
               const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

/* The locator of the node a trace's descriptor names (role, name, nth among
 * alike, as the replay re-finds it), or NULL for none that reads. */
static char *
descriptor_locator (Emitter         *em,
                    JsonObject      *descriptor,
                    SightActionKind  kind)
{
  const char *role = json_object_get_string_member_with_default (descriptor, "role", NULL);
  const char *name = json_object_get_string_member_with_default (descriptor, "name", NULL);
  const char *test_id = json_object_get_string_member_with_default (descriptor, "testId", NULL);
  const char *css = json_object_get_string_member_with_default (descriptor, "css", NULL);
  gint64 nth = json_object_get_int_member_with_default (descriptor, "nth", 0);
  gboolean field = kind == SIGHT_ACTION_FILL || kind == SIGHT_ACTION_SELECT ||
                   kind == SIGHT_ACTION_UPLOAD;

  if (role != NULL && !g_str_equal (role, "generic") && name != NULL && *name != '\0')
    return build_locator (em, role, name, TRUE, nth > 0 && nth < G_MAXINT ? (int) nth + 1 : 0,
                          field ? TARGET_FIELD : TARGET_CONTROL);
  if (test_id != NULL && *test_id != '\0')
    {
      g_autofree char *id = js_string (test_id);

      return g_strdup_printf ("page.getByTestId(%s)", id);
    }
  if (css != NULL && *css != '\0')
    {
      g_autofree char *selector = js_string (css);

      return g_strdup_printf ("page.locator(%s)", selector);
    }
  return NULL;
}

/* The Playwright code of a trace's action @index into @b, or FALSE with
 * *@why when it has none. */
static gboolean
append_cached_action (Emitter     *em,
                      GString     *b,
                      SightTrace  *trace,
                      guint        index,
                      JsonObject  *params,
                      char       **why)
{
  JsonObject *recorded = sight_trace_get_action (trace, index);
  const char *tool = json_object_get_string_member_with_default (recorded, "tool", "");
  JsonObject *descriptor = object_member (recorded, "descriptor");
  JsonObject *offset = object_member (descriptor, "offset");
  JsonObject *point = object_member (descriptor, "point");
  g_auto(SightAction) action = { 0 };
  g_autofree char *loc = NULL;
  g_autofree char *value = NULL;
  const char *call;

  if (!sight_action_from_tool_call (&action, tool, object_member (recorded, "args")))
    {
      *why = g_strdup_printf ("its trace holds an action Sightline does not know (\"%s\")", tool);
      return FALSE;
    }
  if (action.kind == SIGHT_ACTION_TAP_AT && (point != NULL || descriptor == NULL))
    {
      /* a bare point, as the replay taps it: on a viewport of the recorded size */
      JsonObject *viewport = object_member (descriptor, "viewport");

      if (viewport != NULL)
        g_string_append_printf (b, "  // a point on a %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                                   " viewport\n",
                                json_object_get_int_member_with_default (viewport, "width", 0),
                                json_object_get_int_member_with_default (viewport, "height", 0));
      g_string_append_printf (b, "  await page.mouse.click(%g, %g);\n", action.x, action.y);
      return TRUE;
    }
  if (descriptor != NULL && sight_action_kind_is_page_action (action.kind))
    {
      loc = descriptor_locator (em, descriptor, action.kind);
      if (loc == NULL)
        {
          *why = g_strdup_printf ("its %s action names no node a locator can find", tool);
          return FALSE;
        }
    }
  if (action.kind == SIGHT_ACTION_FILL || action.kind == SIGHT_ACTION_SELECT)
    {
      if (action.param != NULL)
        value = param_value_expression (em, params, action.param);
      else
        value = js_string (action.value != NULL ? action.value : "");
      if (value == NULL)
        {
          *why = g_strdup_printf ("its trace types {%s}, which this step's params do not have",
                                  action.param);
          return FALSE;
        }
    }

  switch (action.kind)
    {
    case SIGHT_ACTION_TAP_AT:
      /* a point inside a listed node: the same place in its box */
      g_string_append_printf (b, "  await %s.click({ position: { x: %g, y: %g } });\n", loc,
                              json_object_get_double_member_with_default (offset, "x", 0),
                              json_object_get_double_member_with_default (offset, "y", 0));
      break;
    case SIGHT_ACTION_FILL:
      if (loc != NULL)
        g_string_append_printf (b, "  await %s.fill(%s);\n", loc, value);
      else
        g_string_append_printf (b, "  await page.keyboard.type(%s);\n", value);
      break;
    case SIGHT_ACTION_SELECT:
      if (loc == NULL)
        {
          *why = g_strdup ("its trace selects an option in no node");
          return FALSE;
        }
      g_string_append_printf (b, "  await %s.selectOption(%s);\n", loc, value);
      break;
    case SIGHT_ACTION_PRESS:
      {
        g_autofree char *key = js_string (action.value != NULL ? action.value : "");

        if (loc != NULL)
          g_string_append_printf (b, "  await %s.press(%s);\n", loc, key);
        else
          g_string_append_printf (b, "  await page.keyboard.press(%s);\n", key);
      }
      break;
    case SIGHT_ACTION_SCROLL:
      if (loc != NULL)
        g_string_append_printf (b, "  await %s.scrollIntoViewIfNeeded();\n", loc);
      else
        {
          int direction = SIGHT_SCROLL_DOWN;
          char *end = NULL;
          gint64 pixels = action.value != NULL ? g_ascii_strtoll (action.value, &end, 10) : 0;

          if (action.value != NULL && end != action.value && *end == '\0')
            append_page_scroll (b, pixels < 0 ? SIGHT_SCROLL_UP : SIGHT_SCROLL_DOWN,
                                (int) CLAMP (ABS (pixels), 1, G_MAXINT));
          else if (action.value == NULL ||
                   sight_enum_from_nick (SIGHT_TYPE_SCROLL_KIND, action.value, &direction))
            append_page_scroll (b, direction, 0);
          else
            {
              *why = g_strdup_printf ("its trace scrolls \"%s\"", action.value);
              return FALSE;
            }
        }
      break;
    case SIGHT_ACTION_NAVIGATE:
      {
        g_autofree char *url = resolve_url (em, action.value != NULL ? action.value : "");
        g_autofree char *url_js = js_string (url);

        g_string_append_printf (b, "  await page.goto(%s);\n", url_js);
      }
      break;
    case SIGHT_ACTION_WAIT:
      g_string_append_printf (b, "  await page.waitForTimeout(%s);\n", action.value);
      break;
    case SIGHT_ACTION_SCREENSHOT:
    case SIGHT_ACTION_DONE:
      /* the model looked or concluded: nothing on the page changed */
      break;
    case SIGHT_ACTION_UPLOAD:
      *why = g_strdup ("its trace uploads a file, which a trace does not replay");
      return FALSE;
    case SIGHT_ACTION_CLICK:
    case SIGHT_ACTION_DOUBLE_CLICK:
    case SIGHT_ACTION_HOVER:
    case SIGHT_ACTION_CHECK:
    case SIGHT_ACTION_UNCHECK:
    case SIGHT_ACTION_BACK:
    case SIGHT_ACTION_FORWARD:
    case SIGHT_ACTION_RELOAD:
    default:
      call = playwright_call (action.kind);
      if (call == NULL || (loc == NULL && sight_action_kind_is_page_action (action.kind)))
        {
          *why = g_strdup_printf ("its %s action has no target to take it", tool);
          return FALSE;
        }
      g_string_append_printf (b, "  await %s.%s();\n", loc != NULL ? loc : "page", call);
      break;
    }
  return TRUE;
}

/* The trace an act step replays, as the step executor would find it (the
 * same agent, instruction and param names), or NULL with *@why. */
static SightTrace *
find_trace (Emitter     *em,
            JsonObject  *step,
            const char  *instruction,
            char       **why)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) traces = NULL;
  const SightAgentConfig *agent;
  JsonNode *agent_node = json_object_get_member (step, "agent");
  const char *name = em->test_agent;

  if (agent_node != NULL && JSON_NODE_HOLDS_VALUE (agent_node) &&
      json_node_get_value_type (agent_node) == G_TYPE_STRING)
    name = json_node_get_string (agent_node);

  if (em->traces == NULL)
    {
      *why = g_strdup ("the project's trace cache is off, so no act step has a trace");
      return NULL;
    }
  agent = sight_project_resolve_agent (em->project, name, &error);
  if (agent == NULL)
    {
      *why = g_strdup (error->message);
      return NULL;
    }
  traces = sight_trace_cache_find_step (em->traces, agent->name, instruction,
                                        json_object_get_member (step, "params"));
  if (traces->len == 1)
    return sight_trace_ref (g_ptr_array_index (traces, 0));
  if (traces->len == 0)
    *why = g_strdup ("no trace of it in the project's trace cache");
  else
    *why = g_strdup_printf ("%u traces of it, recorded from different pages; export cannot "
                            "tell where the step starts", traces->len);
  return NULL;
}

/* An act with a trace: the recorded actions, as the cache replays them with
 * no model. FALSE with *@why (nothing written) when an action has no code. */
static gboolean
emit_cached (Emitter     *em,
             JsonObject  *step,
             const char  *instruction,
             SightTrace  *trace,
             char       **why)
{
  g_autoptr(GString) code = g_string_new (NULL);
  JsonObject *params = object_member (step, "params");
  guint n = sight_trace_get_n_actions (trace);
  g_autofree char *line = NULL;

  for (guint i = 0; i < n; i++)
    if (!append_cached_action (em, code, trace, i, params, why))
      return FALSE;

  line = g_strdup_printf ("act: %s", instruction);
  append_comment (em->body, "  ", line);
  g_clear_pointer (&line, g_free);
  line = g_strdup_printf ("The %u action%s of its trace in Sightline's cache (recorded from %s%s),"
                          "\nas Sightline replays them with no model.", n, n == 1 ? "" : "s",
                          sight_trace_get_url_pattern (trace),
                          sight_trace_needs_review (trace) ? "; healed by the model, not yet "
                                                             "reviewed" : "");
  append_comment (em->body, "  ", line);
  g_string_append (em->body, code->str);
  return TRUE;
}

static void
emit_model (Emitter    *em,
            JsonObject *step,
            guint       index,
            const char *kind,
            const char *instruction)
{
  GString *b = em->body;
  g_autofree char *text = js_string (instruction);
  g_autofree char *why = NULL;
  g_autofree char *title = NULL;
  g_autofree char *title_js = NULL;
  g_autoptr(GString) options = g_string_new (NULL);
  SightStepKind agent_kind = SIGHT_STEP_ACT;

  sight_step_kind_from_string (kind, &agent_kind);
  if (em->format == SIGHT_EXPORT_E2E)
    {
      gboolean returns = agent_kind == SIGHT_STEP_EXTRACT;

      if (returns)
        g_string_append_printf (b, "  const extracted%u = ", index + 1);
      else
        g_string_append (b, "  ");
      g_string_append_printf (b, "await agent.%s(%s", kind, text);
      append_options (em, b, step, kind);
      g_string_append (b, ");\n");
      if (returns)
        g_string_append_printf (b, "  test.info().annotations.push({ type: 'extracted', "
                                   "description: JSON.stringify(extracted%u) });\n", index + 1);
      return;
    }

  if (agent_kind == SIGHT_STEP_ACT)
    {
      g_autoptr(SightTrace) trace = find_trace (em, step, instruction, &why);

      if (trace != NULL && emit_cached (em, step, instruction, trace, &why))
        return;
    }
  else
    why = g_strdup ("it needs a model, which plain Playwright has not");

  /* Plain Playwright has no agent: the test stops here as fixme, so it is
   * reported as not done rather than passing without the step. */
  g_ptr_array_add (em->fixme, g_strdup_printf ("step %u (%s \"%s\"): %s", index + 1, kind,
                                               instruction, why));
  title = g_strdup_printf ("%s: %s", kind, instruction);
  title_js = js_string (title);
  append_comment (b, "  ", title);
  append_options (em, options, step, kind);
  if (options->len > 0)
    {
      g_autofree char *line = g_strdup_printf ("options%s", options->str + 1);

      append_comment (b, "  ", line);
    }
  {
    g_autofree char *line = g_strdup_printf (
      "Not done here: %s.\n"
      "Write this step with Playwright actions and assertions, then remove the fixme.", why);

    append_comment (b, "  ", line);
  }
  g_string_append_printf (b, "  test.fixme(true, %s);\n", title_js);
}

char *
sight_export_test (JsonNode           *test_file,
                   const char         *source_name,
                   SightExportFormat   format,
                   SightProject       *project,
                   GStrv              *out_fixme,
                   GError            **error)
{
  g_autoptr(SightProject) default_project = project == NULL ? sight_project_new_default () : NULL;
  g_autoptr(SightTraceCache) traces = NULL;
  g_autoptr(GPtrArray) fixme = g_ptr_array_new_with_free_func (g_free);
  Emitter em = { format, NULL, NULL, FALSE, FALSE, NULL, NULL, NULL, fixme };
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GString) body = g_string_new (NULL);
  JsonObject *root;
  JsonArray *steps;
  const char *name = NULL;
  const char *url = NULL;
  const char * const *kinds = sight_step_kind_get_names ();

  g_return_val_if_fail (test_file != NULL, NULL);

  if (!JSON_NODE_HOLDS_OBJECT (test_file))
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "a test file is a JSON object");
      return NULL;
    }
  root = json_node_get_object (test_file);
  if (!json_object_has_member (root, "steps") ||
      !JSON_NODE_HOLDS_ARRAY (json_object_get_member (root, "steps")))
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "a test file needs \"steps\", an array");
      return NULL;
    }
  steps = json_object_get_array_member (root, "steps");
  if (json_object_has_member (root, "name"))
    name = json_object_get_string_member_with_default (root, "name", NULL);
  if (json_object_has_member (root, "url"))
    url = json_object_get_string_member_with_default (root, "url", NULL);
  if (name == NULL)
    name = source_name != NULL ? source_name : "exported test";

  em.body = body;
  em.base_url = g_strdup (url);
  em.project = project != NULL ? project : default_project;
  if (sight_project_get_trace_cache_dir (em.project) != NULL)
    traces = sight_trace_cache_new (sight_project_get_trace_cache_dir (em.project));
  em.traces = traces;
  if (json_object_has_member (root, "agent"))
    em.test_agent = json_object_get_string_member_with_default (root, "agent", NULL);

  if (url != NULL)
    {
      g_autofree char *url_js = js_string (url);

      g_string_append_printf (body, "  await page.goto(%s);\n", url_js);
    }

  for (guint i = 0; i < json_array_get_length (steps); i++)
    {
      JsonNode *node = json_array_get_element (steps, i);
      JsonObject *step;
      const char *kind = NULL;
      const char *instruction;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "step %u is not an object", i + 1);
          goto fail;
        }
      step = json_node_get_object (node);
      for (guint k = 0; kinds[k] != NULL; k++)
        if (json_object_has_member (step, kinds[k]))
          {
            if (kind != NULL)
              {
                g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                             "step %u has both \"%s\" and \"%s\"", i + 1, kind, kinds[k]);
                goto fail;
              }
            kind = kinds[k];
          }
      if (kind == NULL)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "step %u has none of do, act, assert, waitFor, extract", i + 1);
          goto fail;
        }
      instruction = json_object_get_string_member_with_default (step, kind, NULL);
      if (instruction == NULL || *instruction == '\0')
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "step %u: \"%s\" must be a non-empty string", i + 1, kind);
          goto fail;
        }

      g_string_append_c (body, '\n');
      if (g_str_equal (kind, SIGHT_STEP_DIRECT_NAME))
        {
          if (!emit_direct (&em, step, instruction, i, error))
            goto fail;
        }
      else
        emit_model (&em, step, i, kind, instruction);
    }

  /* header */
  {
    g_autofree char *title = js_string (name);
    g_autofree char *header = g_strdup_printf (
      "%s\nExported by Sightline %s from %s.\n%s", name, PACKAGE_VERSION,
      source_name != NULL ? source_name : "a test file",
      format == SIGHT_EXPORT_PLAYWRIGHT
        ? "Direct steps are role-based locators, and so are the actions an act step's trace\n"
          "recorded; a step that needs a model stops the test as fixme."
        : "Direct steps are role-based locators; model steps are agent calls with the same\n"
          "instructions and options.");

    append_comment (out, "", header);
    g_string_append_printf (out, "import { test, expect%s } from '%s';\n",
                            em.uses_control ? ", type Locator, type Page" : "",
                            format == SIGHT_EXPORT_PLAYWRIGHT ? "@playwright/test" : "@e2edev/e2e");
    if (em.uses_zod)
      g_string_append (out, "import { z } from 'zod';\n");
    g_string_append_c (out, '\n');
    if (em.uses_control)
      append_control_helper (out);

    if (format == SIGHT_EXPORT_E2E)
      g_string_append_printf (out, "test(%s, async ({ page, agent, credentials }) => {\n", title);
    else
      g_string_append_printf (out, "test(%s, async ({ page }) => {\n", title);
    if (json_object_has_member (root, "timeout"))
      g_string_append_printf (out, "  test.setTimeout(%" G_GINT64_FORMAT ");\n",
                              json_object_get_int_member_with_default (root, "timeout", 120000));
    if (format == SIGHT_EXPORT_E2E && json_object_has_member (root, "agent"))
      {
        g_autofree char *line = g_strdup_printf (
          "agent: the test file's agent is \"%s\"; set it in the fixture's config.",
          json_object_get_string_member_with_default (root, "agent", ""));

        append_comment (out, "  ", line);
      }
    g_string_append (out, body->str);
    g_string_append (out, "});\n");
  }

  g_free (em.base_url);
  if (out_fixme != NULL)
    {
      g_ptr_array_add (fixme, NULL);
      *out_fixme = (GStrv) g_ptr_array_steal (fixme, NULL);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);

fail:
  g_free (em.base_url);
  return NULL;
}

char *
sight_export_test_path (const char         *path,
                        SightExportFormat   format,
                        GStrv              *out_fixme,
                        GError            **error)
{
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(SightProject) project = NULL;
  g_autofree char *base = g_path_get_basename (path);

  root = sight_json_parse_file (path, SIGHT_JSON_MAX_DEPTH, &local_error);
  if (root == NULL)
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                     "%s: no such test file", path);
      else
        g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "%s: %s", path,
                     local_error->message);
      return NULL;
    }
  project = sight_project_load_for (path, error);
  if (project == NULL)
    return NULL;
  return sight_export_test (root, base, format, project, out_fixme, error);
}
