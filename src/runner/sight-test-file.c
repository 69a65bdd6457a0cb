/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-test-file"

#include "config.h"

#include "sight-test-file.h"

#include <stdio.h>
#include <string.h>

#include "sight-direct-step.h"
#include "sight-error.h"
#include "sight-json.h"
#include "sight-tool-args.h"

static const char * const file_members[] = {
  "name", "url", "agent", "timeout", "steps", "description", "tags", "$schema", NULL
};
/* The step kinds' names, indexed by SightTestStepKind. */
#define step_kinds (sight_step_kind_get_names ())

const char *
sight_test_step_kind_to_string (SightTestStepKind kind)
{
  g_return_val_if_fail (kind >= SIGHT_TEST_STEP_DO && kind <= SIGHT_TEST_STEP_EXTRACT, NULL);
  return step_kinds[kind];
}

static void
test_step_free (SightTestStep *step)
{
  g_free (step->instruction);
  g_clear_pointer (&step->options, json_object_unref);
  g_free (step);
}

void
sight_test_file_free (SightTestFile *file)
{
  if (file == NULL)
    return;
  g_free (file->path);
  g_free (file->name);
  g_free (file->url);
  g_free (file->agent);
  g_clear_pointer (&file->steps, g_ptr_array_unref);
  g_clear_pointer (&file->root, json_node_unref);
  g_free (file);
}

static gboolean
fail (GError    **error,
      const char *path,
      const char *format,
      ...) G_GNUC_PRINTF (3, 4);

static gboolean
fail (GError    **error,
      const char *path,
      const char *format,
      ...)
{
  g_autofree char *message = NULL;
  g_autofree char *base = g_path_get_basename (path);
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "%s: %s", base, message);
  return FALSE;
}

static gboolean
parse_step (SightTestFile  *file,
            JsonNode       *node,
            guint           index,
            GError        **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GList) members = NULL;
  SightTestStep *step;
  JsonObject *object;
  const char *kind_name = NULL;
  guint kind = 0;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return fail (error, file->path, "step %u: must be an object such as {\"do\": \"click Sign in\"}",
                 index + 1);
  object = json_node_get_object (node);
  for (guint k = 0; step_kinds[k] != NULL; k++)
    if (json_object_has_member (object, step_kinds[k]))
      {
        if (kind_name != NULL)
          return fail (error, file->path, "step %u: has both %s and %s; one step does one thing",
                       index + 1, kind_name, step_kinds[k]);
        kind_name = step_kinds[k];
        kind = k;
      }
  if (kind_name == NULL)
    return fail (error, file->path, "step %u: needs one of do, act, assert, waitFor or extract",
                 index + 1);

  step = g_new0 (SightTestStep, 1);
  step->kind = kind;
  step->options = json_object_new ();
  g_ptr_array_add (file->steps, step);

  {
    JsonNode *text = json_object_get_member (object, kind_name);

    if (!JSON_NODE_HOLDS_VALUE (text) || json_node_get_value_type (text) != G_TYPE_STRING ||
        *json_node_get_string (text) == '\0')
      return fail (error, file->path, "step %u: %s must be a non-empty string", index + 1,
                   kind_name);
    step->instruction = g_strdup (json_node_get_string (text));
  }

  members = json_object_get_members (object);
  for (GList *l = members; l != NULL; l = l->next)
    if (!g_str_equal (l->data, kind_name))
      json_object_set_member (step->options, l->data,
                              json_node_copy (json_object_get_member (object, l->data)));

  if (step->kind == SIGHT_TEST_STEP_DO)
    {
      g_autoptr(SightDirectStep) direct = NULL;

      JsonNode *params = json_object_get_member (step->options, "params");

      /* A direct step takes params, for {name} placeholders (a Secret among
       * them is filled host-side); nothing else. */
      if (json_object_get_size (step->options) > (params != NULL ? 1 : 0))
        return fail (error, file->path, "step %u: a do step takes no options but params",
                     index + 1);
      if (params != NULL && !JSON_NODE_HOLDS_OBJECT (params))
        return fail (error, file->path, "step %u: params must be an object", index + 1);
      direct = sight_direct_step_parse (step->instruction, &local_error);
      if (direct == NULL)
        return fail (error, file->path, "step %u: %s", index + 1, local_error->message);
    }
  return TRUE;
}

SightTestFile *
sight_test_file_parse (const char  *path,
                       const char  *text,
                       gssize       length,
                       GError     **error)
{
  g_autoptr(SightTestFile) file = g_new0 (SightTestFile, 1);
  g_autoptr(GError) local_error = NULL;
  JsonObject *root;
  JsonNode *steps;
  const char *name, *url, *agent;
  gint64 timeout;

  file->path = g_strdup (path);
  file->steps = g_ptr_array_new_with_free_func ((GDestroyNotify) test_step_free);

  /* json-glib's message carries "<data>:line:column: what": say it in
   * words after the file's name. */
  file->root = sight_json_parse (text, length, SIGHT_JSON_MAX_DEPTH, &local_error);
  if (file->root == NULL)
    {
      const char *message = local_error->message;
      guint line = 0, column = 0;
      int used = 0;

      if (g_str_has_prefix (message, "<data>:"))
        message += strlen ("<data>:");
      if (sscanf (message, "%u:%u: %n", &line, &column, &used) == 2 && used > 0)
        fail (error, path, "line %u, column %u: %s", line, column, message + used);
      else
        fail (error, path, "%s", message);
      return NULL;
    }
  if (!JSON_NODE_HOLDS_OBJECT (file->root))
    {
      fail (error, path, "a test file is a JSON object with name, url and steps");
      return NULL;
    }
  root = json_node_get_object (file->root);
  if (!sight_tool_args_check_known (root, file_members, &local_error) ||
      !sight_tool_args_get_string (root, "name", 500, &name, &local_error) ||
      !sight_tool_args_get_string (root, "url", 2048, &url, &local_error) ||
      (url != NULL && url[0] != '/' && !sight_url_validate (url, "url", &local_error)) ||
      !sight_tool_args_get_string (root, "agent", 100, &agent, &local_error) ||
      !sight_tool_args_get_int (root, "timeout", 0, 1, G_GINT64_CONSTANT (9007199254740991),
                                &timeout, &local_error))
    {
      fail (error, path, "%s", local_error->message);
      return NULL;
    }
  file->name = g_strdup (name);
  if (file->name == NULL)
    file->name = g_path_get_basename (path);
  file->url = g_strdup (url);
  file->agent = g_strdup (agent);
  file->timeout_ms = timeout;

  steps = json_object_get_member (root, "steps");
  if (steps == NULL || !JSON_NODE_HOLDS_ARRAY (steps))
    {
      fail (error, path, "steps: must be an array of steps");
      return NULL;
    }
  for (guint i = 0; i < json_array_get_length (json_node_get_array (steps)); i++)
    if (!parse_step (file, json_array_get_element (json_node_get_array (steps), i), i, error))
      return NULL;
  return g_steal_pointer (&file);
}

SightTestFile *
sight_test_file_load (const char  *path,
                      GError     **error)
{
  g_autofree char *text = NULL;
  gsize length = 0;
  g_autoptr(GError) local_error = NULL;

  if (!g_file_get_contents (path, &text, &length, &local_error))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "%s", local_error->message);
      return NULL;
    }
  return sight_test_file_parse (path, text, length, error);
}

gboolean
sight_test_file_save (SightTestFile  *file,
                      GError        **error)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autofree char *text = NULL;

  json_generator_set_pretty (generator, TRUE);
  json_generator_set_indent (generator, 2);
  json_generator_set_root (generator, file->root);
  text = json_generator_to_data (generator, NULL);
  return g_file_set_contents_full (file->path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644,
                                   error);
}
