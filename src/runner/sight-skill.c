/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-skill"

#include "config.h"

#include "sight-skill.h"

#include <string.h>

#include "sight-error.h"
#include "sight-flow-step.h"
#include "sight-json.h"
#include "sight-project.h"
#include "sight-report.h"
#include "sight-run-recorder.h"
#include "sight-step-executor.h"
#include "sight-session.h"
#include "sight-smoke.h"
#include "sight-tool-args.h"

#define STEP_TIMEOUT_MS 30000
#define MAX_STEPS 100
#define TEXT_MAX_BYTES 8000
#define FAILED_STEPS_IN_TEXT 5

static const char * const input_types[] = {
  "url", "string", "string[]", "integer", "number", "boolean", NULL
};
static const char * const known_permissions[] = {
  "network_capture", "active_scan", "file_access", NULL
};
static const char * const skill_members[] = {
  "name", "version", "description", "inputs", "permissions", "url", "steps", "timeout", NULL
};
static const char * const input_members[] = {
  "type", "required", "description", "default", "maxLength", "maxItems", "minimum", "maximum",
  NULL
};

/* The smoke test's inputs, with the limits of smoke_test. */
static const char smoke_uat_inputs[] =
  "{"
  " \"url\": {\"type\": \"url\", \"required\": true,"
  "           \"description\": \"The page to test. http or https, at most 2048 characters\"},"
  " \"steps\": {\"type\": \"string[]\", \"maxItems\": 30, \"maxLength\": 500,"
  "             \"description\": \"Plain-language steps run in order after the page loads\"},"
  " \"expectText\": {\"type\": \"string\", \"maxLength\": 500,"
  "                  \"description\": \"Text that must be on the page when the steps are done\"},"
  " \"expectUrl\": {\"type\": \"string\", \"maxLength\": 500,"
  "                 \"description\": \"Text the page address must contain when the steps are done\"},"
  " \"expectNoText\": {\"type\": \"string\", \"maxLength\": 500,"
  "                    \"description\": \"Text that must not be on the page when the steps are done\"},"
  " \"maxLinks\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 200, \"default\": 50,"
  "                \"description\": \"How many same-origin links of the start page to check\"},"
  " \"strictLinks\": {\"type\": \"boolean\", \"default\": true,"
  "                   \"description\": \"A broken link fails the test; with false it is a finding\"}"
  "}";

struct _SightSkill
{
  GObject      parent_instance;

  char        *name;
  char        *version;
  char        *description;
  char        *path;          /* NULL for the built-in skill */
  JsonObject  *inputs;        /* name → definition */
  GStrv        permissions;
  char        *url;
  GStrv        steps;
  gint64       timeout_ms;    /* of each step */
};

G_DEFINE_FINAL_TYPE (SightSkill, sight_skill, G_TYPE_OBJECT)

static void
sight_skill_finalize (GObject *object)
{
  SightSkill *self = SIGHT_SKILL (object);

  g_free (self->name);
  g_free (self->version);
  g_free (self->description);
  g_free (self->path);
  g_clear_pointer (&self->inputs, json_object_unref);
  g_strfreev (self->permissions);
  g_free (self->url);
  g_strfreev (self->steps);

  G_OBJECT_CLASS (sight_skill_parent_class)->finalize (object);
}

static void
sight_skill_class_init (SightSkillClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sight_skill_finalize;
}

static void
sight_skill_init (SightSkill *self)
{
}

const char *
sight_skill_get_name (SightSkill *self)
{
  g_return_val_if_fail (SIGHT_IS_SKILL (self), NULL);
  return self->name;
}

const char *
sight_skill_get_version (SightSkill *self)
{
  g_return_val_if_fail (SIGHT_IS_SKILL (self), NULL);
  return self->version;
}

const char *
sight_skill_get_description (SightSkill *self)
{
  g_return_val_if_fail (SIGHT_IS_SKILL (self), NULL);
  return self->description;
}

gboolean
sight_skill_is_builtin (SightSkill *self)
{
  g_return_val_if_fail (SIGHT_IS_SKILL (self), FALSE);
  return self->path == NULL;
}

const char * const *
sight_skill_get_permissions (SightSkill *self)
{
  g_return_val_if_fail (SIGHT_IS_SKILL (self), NULL);
  return (const char * const *) self->permissions;
}

char *
sight_skill_tool_name (SightSkill *self)
{
  char *name = g_strconcat ("skill_", self->name, NULL);

  g_strdelimit (name, "-", '_');
  return name;
}

/* Parsing */

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
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "%s%s%s",
               path ? path : "", path ? ": " : "", message);
  return FALSE;
}

static gboolean
valid_name (const char *name)
{
  gsize length = strlen (name);

  return length >= 1 && length <= 64 &&
         strspn (name, "abcdefghijklmnopqrstuvwxyz0123456789-") == length &&
         name[0] != '-';
}

static gboolean
parse_inputs (SightSkill  *self,
              JsonNode    *node,
              const char  *path,
              GError     **error)
{
  JsonObjectIter iter;
  const char *name;
  JsonNode *value;

  if (node == NULL)
    {
      self->inputs = json_object_new ();
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return fail (error, path, "inputs must be an object of name → definition");
  self->inputs = json_object_ref (json_node_get_object (node));
  json_object_iter_init (&iter, self->inputs);
  while (json_object_iter_next (&iter, &name, &value))
    {
      JsonObject *definition;
      const char *type;
      JsonObjectIter members;
      const char *member;

      if (strspn (name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
          strlen (name) || *name == '\0' || g_str_equal (name, "options") ||
          g_str_equal (name, "confirm"))
        return fail (error, path, "inputs.%s: an input name is letters, digits and _, and not "
                     "options or confirm", name);
      if (!JSON_NODE_HOLDS_OBJECT (value))
        return fail (error, path, "inputs.%s must be an object with a type", name);
      definition = json_node_get_object (value);
      json_object_iter_init (&members, definition);
      while (json_object_iter_next (&members, &member, NULL))
        if (!g_strv_contains (input_members, member))
          return fail (error, path, "inputs.%s.%s is not a member of an input", name, member);
      type = json_object_get_string_member_with_default (definition, "type", NULL);
      if (type == NULL || !g_strv_contains (input_types, type))
        return fail (error, path, "inputs.%s.type must be one of url, string, string[], integer, "
                     "number, boolean", name);
    }
  return TRUE;
}

static gboolean
parse_strv (JsonNode    *node,
            const char  *what,
            const char  *path,
            GStrv       *out,
            GError     **error)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  JsonArray *array;

  if (node == NULL)
    {
      *out = g_strv_builder_end (builder);
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return fail (error, path, "%s must be an array of strings", what);
  array = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *item = json_array_get_element (array, i);

      if (!JSON_NODE_HOLDS_VALUE (item) || json_node_get_value_type (item) != G_TYPE_STRING ||
          *json_node_get_string (item) == '\0')
        return fail (error, path, "%s[%u] must be a non-empty string", what, i);
      g_strv_builder_add (builder, json_node_get_string (item));
    }
  *out = g_strv_builder_end (builder);
  return TRUE;
}

SightSkill *
sight_skill_new_from_data (const char  *data,
                           const char  *path,
                           GError     **error)
{
  g_autoptr(JsonNode) document = NULL;
  g_autoptr(SightSkill) self = g_object_new (SIGHT_TYPE_SKILL, NULL);
  g_autoptr(GError) local_error = NULL;
  g_autofree char *base = path ? g_path_get_basename (path) : g_strdup ("skill");
  JsonObject *root;
  JsonObjectIter iter;
  const char *member;

  document = sight_json_parse (data, -1, SIGHT_JSON_MAX_DEPTH, &local_error);
  if (document == NULL)
    {
      fail (error, base, "%s", local_error->message);
      return NULL;
    }
  if (!JSON_NODE_HOLDS_OBJECT (document))
    {
      fail (error, base, "a skill file holds one JSON object");
      return NULL;
    }
  root = json_node_get_object (document);
  json_object_iter_init (&iter, root);
  while (json_object_iter_next (&iter, &member, NULL))
    if (!g_strv_contains (skill_members, member))
      {
        fail (error, base, "%s is not a member of a skill", member);
        return NULL;
      }

  self->name = g_strdup (json_object_get_string_member_with_default (root, "name", ""));
  if (!valid_name (self->name))
    {
      fail (error, base, "name must be 1 to 64 of a-z, 0-9 and -");
      return NULL;
    }
  if (g_str_equal (self->name, SIGHT_SKILL_SMOKE_UAT))
    {
      fail (error, base, "the name smoke-uat belongs to the built-in skill");
      return NULL;
    }
  self->version = g_strdup (json_object_get_string_member_with_default (root, "version", "1"));
  self->description = g_strdup (json_object_get_string_member_with_default (root, "description",
                                                                            ""));
  self->url = g_strdup (json_object_get_string_member_with_default (root, "url", "{url}"));
  self->timeout_ms = STEP_TIMEOUT_MS;
  if (json_object_has_member (root, "timeout"))
    {
      JsonNode *timeout = json_object_get_member (root, "timeout");

      if (!JSON_NODE_HOLDS_VALUE (timeout) || json_node_get_value_type (timeout) != G_TYPE_INT64 ||
          json_node_get_int (timeout) < 1000 || json_node_get_int (timeout) > 600000)
        {
          fail (error, base, "timeout: the milliseconds of each step, 1000 to 600000");
          return NULL;
        }
      self->timeout_ms = json_node_get_int (timeout);
    }
  self->path = g_strdup (path ? path : base);
  if (!parse_inputs (self, json_object_get_member (root, "inputs"), base, error) ||
      !parse_strv (json_object_get_member (root, "permissions"), "permissions", base,
                   &self->permissions, error) ||
      !parse_strv (json_object_get_member (root, "steps"), "steps", base, &self->steps, error))
    return NULL;
  for (guint i = 0; self->permissions[i] != NULL; i++)
    if (!g_strv_contains (known_permissions, self->permissions[i]))
      {
        fail (error, base, "permissions[%u] must be network_capture, active_scan or file_access", i);
        return NULL;
      }
  if (g_strv_length (self->steps) > MAX_STEPS)
    {
      fail (error, base, "steps: at most %d", MAX_STEPS);
      return NULL;
    }
  return g_steal_pointer (&self);
}

static SightSkill *
smoke_uat (void)
{
  /* Made on first use, on the main thread, like every runner object. */
  static SightSkill *skill;

  if (skill == NULL)
    {
      SightSkill *self = g_object_new (SIGHT_TYPE_SKILL, NULL);
      g_autoptr(JsonNode) inputs = json_from_string (smoke_uat_inputs, NULL);

      self->name = g_strdup (SIGHT_SKILL_SMOKE_UAT);
      self->version = g_strdup ("1");
      self->description = g_strdup ("Smoke-test a page or a short flow: the start page loads, "
                                    "basic accessibility, the links of the start page, your steps, "
                                    "the console, the expected text and address, and every link. "
                                    "The same test as smoke_test.");
      self->inputs = json_object_ref (json_node_get_object (inputs));
      self->permissions = g_new0 (char *, 1);
      self->steps = g_new0 (char *, 1);
      skill = self;
    }
  return g_object_ref (skill);
}

/* The folders */

GStrv
sight_skill_dirs (void)
{
  g_autoptr(GStrvBuilder) dirs = g_strv_builder_new ();
  g_autofree char *store_path = sight_store_default_path ();
  g_autofree char *data_dir = g_path_get_dirname (store_path);
  g_autofree char *cwd = g_get_current_dir ();
  g_autofree char *project = sight_project_find (cwd);

  g_autofree char *user_skills = g_build_filename (data_dir, "skills", NULL);

  g_strv_builder_add (dirs, user_skills);
  if (project != NULL)
    {
      g_autofree char *project_dir = g_path_get_dirname (project);
      g_autofree char *project_skills = g_build_filename (project_dir, "skills", NULL);

      g_strv_builder_add (dirs, project_skills);
    }
  return g_strv_builder_end (dirs);
}

static int
compare_skills (gconstpointer a,
                gconstpointer b)
{
  SightSkill *x = *(SightSkill **) a;
  SightSkill *y = *(SightSkill **) b;
  int by_name = g_strcmp0 (x->name, y->name);

  /* The newest version first within a name. */
  return by_name != 0 ? by_name : -g_strcmp0 (x->version, y->version);
}

GPtrArray *
sight_skill_list (void)
{
  GPtrArray *skills = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) users = g_ptr_array_new_with_free_func (g_object_unref);
  g_auto(GStrv) dirs = sight_skill_dirs ();

  g_ptr_array_add (skills, smoke_uat ());
  for (guint d = 0; dirs[d] != NULL; d++)
    {
      g_autoptr(GDir) dir = g_dir_open (dirs[d], 0, NULL);
      const char *file;

      while (dir != NULL && (file = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *path = NULL;
          g_autofree char *text = NULL;
          g_autoptr(GError) error = NULL;
          SightSkill *skill;
          gboolean seen = FALSE;

          if (!g_str_has_suffix (file, ".json"))
            continue;
          path = g_build_filename (dirs[d], file, NULL);
          if (!g_file_get_contents (path, &text, NULL, &error) ||
              (skill = sight_skill_new_from_data (text, path, &error)) == NULL)
            {
              g_message ("Skipping the skill file %s: %s", path, error->message);
              continue;
            }
          for (guint i = 0; i < users->len; i++)
            {
              SightSkill *other = g_ptr_array_index (users, i);

              seen |= g_str_equal (other->name, skill->name) &&
                      g_str_equal (other->version, skill->version);
            }
          if (seen)
            g_object_unref (skill);
          else
            g_ptr_array_add (users, skill);
        }
    }
  g_ptr_array_sort (users, compare_skills);
  for (guint i = 0; i < users->len; i++)
    g_ptr_array_add (skills, g_object_ref (g_ptr_array_index (users, i)));
  return skills;
}

SightSkill *
sight_skill_find (const char  *name,
                  const char  *version,
                  GError     **error)
{
  g_autoptr(GPtrArray) skills = sight_skill_list ();
  g_autofree char *safe = sight_text_sanitize (name, 100);

  for (guint i = 0; i < skills->len; i++)
    {
      SightSkill *skill = g_ptr_array_index (skills, i);

      if (g_str_equal (skill->name, name) &&
          (version == NULL || g_str_equal (skill->version, version)))
        return g_object_ref (skill);
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "No skill %s%s%s", safe,
               version ? " of version " : "", version ? version : "");
  return NULL;
}

/* Inputs as JSON Schema */

static JsonObject *
input_schema (JsonObject *definition)
{
  JsonObject *schema = json_object_new ();
  const char *type = json_object_get_string_member (definition, "type");
  static const char * const copied[] = { "description", "default", NULL };

  if (g_str_equal (type, "url"))
    {
      json_object_set_string_member (schema, "type", "string");
      json_object_set_int_member (schema, "minLength", 1);
      json_object_set_int_member (schema, "maxLength", 2048);
      json_object_set_string_member (schema, "pattern", "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$");
    }
  else if (g_str_equal (type, "string[]"))
    {
      JsonObject *items = json_object_new ();

      json_object_set_string_member (schema, "type", "array");
      json_object_set_string_member (items, "type", "string");
      if (json_object_has_member (definition, "maxLength"))
        json_object_set_member (items, "maxLength",
                                json_object_dup_member (definition, "maxLength"));
      json_object_set_object_member (schema, "items", items);
      if (json_object_has_member (definition, "maxItems"))
        json_object_set_member (schema, "maxItems", json_object_dup_member (definition, "maxItems"));
    }
  else
    {
      json_object_set_string_member (schema, "type", type);
      if (g_str_equal (type, "string") && json_object_has_member (definition, "maxLength"))
        json_object_set_member (schema, "maxLength",
                                json_object_dup_member (definition, "maxLength"));
      if (g_str_equal (type, "integer") || g_str_equal (type, "number"))
        {
          if (json_object_has_member (definition, "minimum"))
            json_object_set_member (schema, "minimum", json_object_dup_member (definition, "minimum"));
          if (json_object_has_member (definition, "maximum"))
            json_object_set_member (schema, "maximum", json_object_dup_member (definition, "maximum"));
        }
    }
  for (guint i = 0; copied[i] != NULL; i++)
    if (json_object_has_member (definition, copied[i]))
      json_object_set_member (schema, copied[i], json_object_dup_member (definition, copied[i]));
  return schema;
}

JsonObject *
sight_skill_input_properties (SightSkill *self)
{
  JsonObject *properties = json_object_new ();
  JsonObjectIter iter;
  const char *name;
  JsonNode *value;

  g_return_val_if_fail (SIGHT_IS_SKILL (self), NULL);

  json_object_iter_init (&iter, self->inputs);
  while (json_object_iter_next (&iter, &name, &value))
    json_object_set_object_member (properties, name, input_schema (json_node_get_object (value)));
  return properties;
}

GStrv
sight_skill_required_inputs (SightSkill *self)
{
  g_autoptr(GStrvBuilder) required = g_strv_builder_new ();
  JsonObjectIter iter;
  const char *name;
  JsonNode *value;

  g_return_val_if_fail (SIGHT_IS_SKILL (self), NULL);

  json_object_iter_init (&iter, self->inputs);
  while (json_object_iter_next (&iter, &name, &value))
    if (json_object_get_boolean_member_with_default (json_node_get_object (value), "required",
                                                     FALSE))
      g_strv_builder_add (required, name);
  return g_strv_builder_end (required);
}

JsonNode *
sight_skill_to_json (SightSkill *self)
{
  g_autoptr(JsonObject) entry = json_object_new ();
  g_autoptr(JsonArray) permissions = json_array_new ();
  g_autofree char *tool = sight_skill_tool_name (self);
  g_auto(GStrv) required = sight_skill_required_inputs (self);
  g_autoptr(JsonArray) required_array = json_array_new ();
  JsonObject *inputs;
  JsonObjectIter iter;
  const char *name;
  JsonNode *value;
  JsonNode *node;

  g_return_val_if_fail (SIGHT_IS_SKILL (self), NULL);

  json_object_set_string_member (entry, "name", self->name);
  json_object_set_string_member (entry, "version", self->version);
  json_object_set_string_member (entry, "description", self->description);
  json_object_set_boolean_member (entry, "builtin", sight_skill_is_builtin (self));
  json_object_set_string_member (entry, "tool", tool);
  /* Each input says whether it is required, from the same list as the
   * skill's tool's inputSchema.required, so a client reading either sees
   * the same thing. */
  inputs = sight_skill_input_properties (self);
  json_object_iter_init (&iter, inputs);
  while (json_object_iter_next (&iter, &name, &value))
    json_object_set_boolean_member (json_node_get_object (value), "required",
                                    g_strv_contains ((const char * const *) required, name));
  json_object_set_object_member (entry, "inputs", inputs);
  for (guint i = 0; required[i] != NULL; i++)
    json_array_add_string_element (required_array, required[i]);
  json_object_set_array_member (entry, "requiredInputs", g_steal_pointer (&required_array));
  for (guint i = 0; self->permissions[i] != NULL; i++)
    json_array_add_string_element (permissions, self->permissions[i]);
  json_object_set_array_member (entry, "permissions", g_steal_pointer (&permissions));
  if (self->path != NULL)
    json_object_set_string_member (entry, "source", self->path);
  node = json_node_new (JSON_NODE_OBJECT);
  json_node_set_object (node, entry);
  return node;
}

/* Checking inputs: each value by its type, the defaults filled in. */

static gboolean
check_value (const char  *name,
             JsonObject  *definition,
             JsonNode    *value,
             GError     **error)
{
  const char *type = json_object_get_string_member (definition, "type");
  gint64 max_length = json_object_get_int_member_with_default (definition, "maxLength", 2000);
  GType value_type = JSON_NODE_HOLDS_VALUE (value) ? json_node_get_value_type (value)
                                                   : G_TYPE_INVALID;

  if (g_str_equal (type, "url"))
    return value_type == G_TYPE_STRING
           ? sight_url_validate (json_node_get_string (value), name, error)
           : fail (error, name, "must be an http or https URL");
  if (g_str_equal (type, "string"))
    {
      if (value_type != G_TYPE_STRING ||
          g_utf8_strlen (json_node_get_string (value), -1) > max_length)
        return fail (error, name, "must be a string of at most %" G_GINT64_FORMAT " characters",
                     max_length);
      return TRUE;
    }
  if (g_str_equal (type, "string[]"))
    {
      JsonArray *array;
      gint64 max_items = json_object_get_int_member_with_default (definition, "maxItems", 50);

      if (!JSON_NODE_HOLDS_ARRAY (value) ||
          json_array_get_length ((array = json_node_get_array (value))) > (guint) max_items)
        return fail (error, name, "must be an array of at most %" G_GINT64_FORMAT " strings",
                     max_items);
      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonNode *item = json_array_get_element (array, i);

          if (!JSON_NODE_HOLDS_VALUE (item) || json_node_get_value_type (item) != G_TYPE_STRING ||
              g_utf8_strlen (json_node_get_string (item), -1) > max_length)
            return fail (error, name, "[%u] must be a string of at most %" G_GINT64_FORMAT
                         " characters", i, max_length);
        }
      return TRUE;
    }
  if (g_str_equal (type, "boolean"))
    return value_type == G_TYPE_BOOLEAN ? TRUE : fail (error, name, "must be true or false");
  if (g_str_equal (type, "integer") || g_str_equal (type, "number"))
    {
      double number;

      if (value_type == G_TYPE_INT64)
        number = (double) json_node_get_int (value);
      else if (value_type == G_TYPE_DOUBLE && g_str_equal (type, "number"))
        number = json_node_get_double (value);
      else
        return fail (error, name, "must be %s", g_str_equal (type, "integer") ? "an integer"
                                                                              : "a number");
      if ((json_object_has_member (definition, "minimum") &&
           number < json_object_get_double_member (definition, "minimum")) ||
          (json_object_has_member (definition, "maximum") &&
           number > json_object_get_double_member (definition, "maximum")))
        return fail (error, name, "must be between %g and %g",
                     json_object_get_double_member_with_default (definition, "minimum", -G_MAXDOUBLE),
                     json_object_get_double_member_with_default (definition, "maximum", G_MAXDOUBLE));
      return TRUE;
    }
  return fail (error, name, "has an unknown type");
}

static JsonObject *
resolve_inputs (SightSkill  *self,
                JsonObject  *inputs,
                GError     **error)
{
  g_autoptr(JsonObject) values = json_object_new ();
  JsonObjectIter iter;
  const char *name;
  JsonNode *value;

  json_object_iter_init (&iter, inputs);
  while (json_object_iter_next (&iter, &name, &value))
    if (!json_object_has_member (self->inputs, name))
      {
        fail (error, name, "the skill %s has no such input", self->name);
        return NULL;
      }
  json_object_iter_init (&iter, self->inputs);
  while (json_object_iter_next (&iter, &name, &value))
    {
      JsonObject *definition = json_node_get_object (value);
      JsonNode *given = json_object_get_member (inputs, name);

      if (given == NULL || JSON_NODE_HOLDS_NULL (given))
        given = json_object_get_member (definition, "default");
      if (given == NULL)
        {
          if (json_object_get_boolean_member_with_default (definition, "required", FALSE))
            {
              fail (error, name, "required by the skill %s", self->name);
              return NULL;
            }
          continue;
        }
      if (!check_value (name, definition, given, error))
        return NULL;
      json_object_set_member (values, name, json_node_copy (given));
    }
  return g_steal_pointer (&values);
}

static char *
value_text (JsonNode *value)
{
  if (JSON_NODE_HOLDS_ARRAY (value))
    {
      JsonArray *array = json_node_get_array (value);
      g_autoptr(GString) text = g_string_new (NULL);

      for (guint i = 0; i < json_array_get_length (array); i++)
        g_string_append_printf (text, "%s%s", i ? ", " : "",
                                json_array_get_string_element (array, i));
      return g_string_free (g_steal_pointer (&text), FALSE);
    }
  if (JSON_NODE_HOLDS_VALUE (value) && json_node_get_value_type (value) == G_TYPE_STRING)
    return g_strdup (json_node_get_string (value));
  return json_to_string (value, FALSE);
}

/* "{name}" → the input's value; other braces stay as they are. */
static char *
expand (const char *template,
        JsonObject *values)
{
  GString *out = g_string_new (NULL);
  const char *p = template;

  while (*p != '\0')
    {
      const char *close;

      if (*p == '{' && (close = strchr (p + 1, '}')) != NULL)
        {
          g_autofree char *name = g_strndup (p + 1, close - p - 1);
          JsonNode *value = json_object_get_member (values, name);

          if (value != NULL)
            {
              g_autofree char *text = value_text (value);

              g_string_append (out, text);
              p = close + 1;
              continue;
            }
        }
      g_string_append_c (out, *p++);
    }
  return g_string_free (out, FALSE);
}

/* Runs of this process: what the store does not say (the skill's version,
 * the session, and that a run was cancelled). */

typedef struct {
  char *skill;
  char *version;
  char *session_id;
  char *status;      /* an override: cancelled; NULL otherwise */
} RunInfo;

static GHashTable *runs;

static void
run_info_free (RunInfo *info)
{
  g_free (info->skill);
  g_free (info->version);
  g_free (info->session_id);
  g_free (info->status);
  g_free (info);
}

static RunInfo *
run_info_add (const char *run_id,
              SightSkill *skill)
{
  RunInfo *info = g_new0 (RunInfo, 1);

  if (runs == NULL)
    runs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                  (GDestroyNotify) run_info_free);
  info->skill = g_strdup (skill->name);
  info->version = g_strdup (skill->version);
  g_hash_table_insert (runs, g_strdup (run_id), info);
  return info;
}

static RunInfo *
run_info_lookup (const char *run_id)
{
  return runs != NULL ? g_hash_table_lookup (runs, run_id) : NULL;
}

/* smoke-uat */

static void
smoke_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  char **holder = user_data;
  g_autofree char *run_id = *holder;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = sight_smoke_test_finish (result, &error);
  RunInfo *info = run_info_lookup (run_id);

  g_free (holder);

  if (node == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) && info != NULL)
    info->status = g_strdup ("cancelled");
  else if (node == NULL)
    g_warning ("The smoke-uat run %s ended with an error: %s", run_id, error->message);
}

/* A user skill's run */

typedef struct {
  SightStore   *store;
  SightSkill   *skill;
  char         *run_id;
  JsonObject   *session_options;
  GCancellable *cancellable;
  SightSession *session;
  GStrv         steps;
  guint         next;
  SightRunRecorder *recorder;
  SightRunVerdict verdict;
  char         *code;
  char         *explanation;
} Run;

static void
run_free (Run *run)
{
  g_clear_object (&run->recorder);
  g_clear_object (&run->store);
  g_clear_object (&run->skill);
  g_free (run->run_id);
  g_clear_pointer (&run->session_options, json_object_unref);
  g_clear_object (&run->cancellable);
  g_clear_object (&run->session);
  g_strfreev (run->steps);
  g_free (run->code);
  g_free (run->explanation);
  g_free (run);
}

static void
run_end (Run *run)
{
  SightWebPage *page = run->session ? sight_session_get_page (run->session) : NULL;
  RunInfo *info = run_info_lookup (run->run_id);

  sight_run_recorder_store_log (run->recorder, page);
  if (g_cancellable_is_cancelled (run->cancellable))
    {
      run->verdict = SIGHT_RUN_VERDICT_ERROR;
      g_free (run->explanation);
      run->explanation = g_strdup ("The run was cancelled");
      if (info != NULL)
        info->status = g_strdup ("cancelled");
    }
  sight_run_recorder_close (run->recorder, run->verdict, run->code, run->explanation,
                            page ? sight_web_page_get_uri (page) : NULL, NULL, NULL);
  if (run->session != NULL)
    sight_session_stop (run->session, "stopped");
  run_free (run);
}

static void run_next (Run *run);

static void
flow_step_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  Run *run = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStepResult) outcome = sight_flow_step_run_finish (result, &error);
  SightRunVerdict verdict = sight_run_recorder_step_result (run->recorder, outcome, error, NULL);

  if (error != NULL)
    {
      SightErrorCode code = error->domain == SIGHT_ERROR ? error->code : SIGHT_ERROR_INTERNAL;

      /* A step that could not run means the skill could not run to a result. */
      run->verdict = verdict == SIGHT_RUN_VERDICT_FAIL ? SIGHT_RUN_VERDICT_FAIL
                                                       : SIGHT_RUN_VERDICT_ERROR;
      run->code = g_strdup (sight_error_code_to_string (code));
      run->explanation = g_strdup (error->message);
    }
  run->next++;
  run_next (run);
}

static void
run_next (Run *run)
{
  g_autofree char *label = NULL;

  if (run->steps[run->next] == NULL || g_cancellable_is_cancelled (run->cancellable))
    {
      run_end (run);
      return;
    }
  if (run->verdict != SIGHT_RUN_VERDICT_PASS)
    {
      /* The first failed step stops the run: the rest are skipped. */
      sight_run_recorder_step_skip (run->recorder, sight_step_kind_for_text (run->steps[run->next]),
                                    run->steps[run->next], run->steps[run->next], NULL,
                                    "An earlier step failed");
      run->next++;
      run_next (run);
      return;
    }
  if (sight_session_get_page (run->session) == NULL)
    {
      /* Stopped by its client (stop_session): the page went with it. */
      run->verdict = SIGHT_RUN_VERDICT_ERROR;
      run->code = g_strdup (sight_error_code_to_string (SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE));
      run->explanation = g_strdup ("The session was stopped before the run ended");
      run_end (run);
      return;
    }
  sight_run_recorder_step_open (run->recorder, sight_step_kind_for_text (run->steps[run->next]),
                                run->steps[run->next], run->steps[run->next], NULL);
  sight_flow_step_run_async (sight_session_get_page (run->session), run->steps[run->next],
                             (guint) run->skill->timeout_ms, run->cancellable, flow_step_cb, run);
}

static void
run_session_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  Run *run = user_data;
  g_autoptr(GError) error = NULL;
  RunInfo *info = run_info_lookup (run->run_id);

  run->session = sight_session_registry_create_finish (SIGHT_SESSION_REGISTRY (source), result,
                                                       &error);
  if (run->session == NULL)
    {
      sight_run_recorder_step_close (run->recorder, SIGHT_RUN_VERDICT_ERROR, error, NULL, NULL,
                                     NULL);
      run->verdict = SIGHT_RUN_VERDICT_ERROR;
      run->code = g_strdup (sight_error_code_to_string (error->domain == SIGHT_ERROR
                                                        ? error->code
                                                        : SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE));
      run->explanation = g_strdup (error->message);
      run_end (run);
      return;
    }
  if (info != NULL)
    info->session_id = g_strdup (sight_session_get_id (run->session));
  sight_run_recorder_step_close (run->recorder, SIGHT_RUN_VERDICT_PASS, NULL,
                                 "The start page loaded", NULL, NULL);
  run_next (run);
}

char *
sight_skill_run_start (SightStore         *store,
                       SightSkill         *skill,
                       JsonObject         *inputs,
                       const char * const *grant,
                       JsonObject         *session,
                       GCancellable       *cancellable,
                       GError            **error)
{
  g_autoptr(JsonObject) values = NULL;
  g_autofree char *name = NULL;
  g_autofree char *url = NULL;
  g_autofree char *run_id = NULL;
  g_autoptr(SightRunRecorder) recorder = NULL;
  SightRunRecord record = { 0 };
  const char *missing = NULL;
  Run *run;

  g_return_val_if_fail (SIGHT_IS_STORE (store), NULL);
  g_return_val_if_fail (SIGHT_IS_SKILL (skill), NULL);
  g_return_val_if_fail (inputs != NULL, NULL);

  for (guint i = 0; skill->permissions[i] != NULL && missing == NULL; i++)
    if (grant == NULL || !g_strv_contains (grant, skill->permissions[i]))
      missing = skill->permissions[i];

  if (sight_skill_is_builtin (skill) && missing == NULL)
    {
      g_autoptr(JsonObject) args = json_object_new ();
      JsonObjectIter iter;
      const char *member;
      JsonNode *value;

      json_object_iter_init (&iter, inputs);
      while (json_object_iter_next (&iter, &member, &value))
        {
          if (!json_object_has_member (skill->inputs, member))
            {
              fail (error, member, "the skill smoke-uat has no such input");
              return NULL;
            }
          json_object_set_member (args, member, json_node_copy (value));
        }
      if (session != NULL)
        json_object_set_object_member (args, "session", json_object_ref (session));
      /* The callback learns the run id once it is known. */
      char **holder = g_new0 (char *, 1);

      run_id = sight_smoke_test_start (store, args, cancellable, smoke_done_cb, holder, error);
      if (run_id == NULL)
        {
          g_free (holder);
          return NULL;
        }
      run_info_add (run_id, skill);
      *holder = g_strdup (run_id);
      return g_steal_pointer (&run_id);
    }

  values = resolve_inputs (skill, inputs, error);
  if (values == NULL && missing == NULL)
    return NULL;
  if (values == NULL)
    {
      g_clear_error (error);
      values = json_object_new ();
    }
  url = expand (skill->url, values);
  if (missing == NULL && !sight_url_validate (url, "url", error))
    return NULL;

  name = g_strdup_printf ("%s %s", skill->name, skill->version);
  record.kind = (char *) "skill";
  record.name = name;
  record.url = url;
  recorder = sight_run_recorder_open (store, &record, error);
  if (recorder == NULL)
    return NULL;
  run_id = g_strdup (sight_run_recorder_get_run_id (recorder));
  run_info_add (run_id, skill);

  if (missing != NULL)
    {
      SightRunRecord denied = { 0 };
      g_autofree char *why = g_strdup_printf ("The skill %s needs the permission %s: ask the "
                                              "user, then run it with grant [\"%s\"]",
                                              skill->name, missing, missing);

      denied.id = run_id;
      denied.verdict = SIGHT_RUN_VERDICT_ERROR;
      denied.code = (char *) "POLICY_DENIED";
      denied.explanation = why;
      if (!sight_store_finish_run (store, &denied, error))
        return NULL;
      return g_steal_pointer (&run_id);
    }

  run = g_new0 (Run, 1);
  run->store = g_object_ref (store);
  run->skill = g_object_ref (skill);
  run->run_id = g_strdup (run_id);
  run->recorder = g_steal_pointer (&recorder);
  run->cancellable = cancellable ? g_object_ref (cancellable) : g_cancellable_new ();
  run->verdict = SIGHT_RUN_VERDICT_PASS;
  run->steps = g_new0 (char *, g_strv_length (skill->steps) + 1);
  for (guint i = 0; skill->steps[i] != NULL; i++)
    run->steps[i] = expand (skill->steps[i], values);
  run->session_options = session ? json_object_ref (session) : json_object_new ();
  json_object_set_string_member (run->session_options, "startUrl", url);
  sight_run_recorder_step_open (run->recorder, "load", "load the start page",
                                "load the start page", NULL);
  sight_session_registry_create_async (sight_session_registry_get_default (),
                                       run->session_options, run->cancellable, run_session_cb,
                                       run);
  return g_steal_pointer (&run_id);
}

/* Reading a run */

static const char *
run_status (const SightRunData *data,
            RunInfo            *info)
{
  const SightRunRecord *run = data->run;

  if (info != NULL && info->status != NULL)
    return info->status;
  switch (run->verdict)
    {
    case SIGHT_RUN_VERDICT_RUNNING:
      return "running";
    case SIGHT_RUN_VERDICT_PASS:
      return "passed";
    case SIGHT_RUN_VERDICT_FAIL:
      return "failed";
    default:
      return g_strcmp0 (run->code, "POLICY_DENIED") == 0 && run->n_steps == 0 ? "denied" : "error";
    }
}

static gboolean
skill_of (const SightRunData  *data,
          char               **out_name,
          char               **out_version)
{
  const SightRunRecord *run = data->run;
  RunInfo *info = run_info_lookup (run->id);
  const char *space;

  if (info != NULL)
    {
      *out_name = g_strdup (info->skill);
      *out_version = g_strdup (info->version);
      return TRUE;
    }
  if (g_strcmp0 (run->kind, "smoke") == 0)
    {
      *out_name = g_strdup (SIGHT_SKILL_SMOKE_UAT);
      *out_version = g_strdup ("1");
      return TRUE;
    }
  if (g_strcmp0 (run->kind, "skill") != 0 || run->name == NULL)
    return FALSE;
  space = strrchr (run->name, ' ');
  *out_name = space ? g_strndup (run->name, space - run->name) : g_strdup (run->name);
  *out_version = g_strdup (space ? space + 1 : "");
  return TRUE;
}

JsonObject *
sight_skill_run_to_json (const SightRunData *data)
{
  const SightRunRecord *run = data->run;
  RunInfo *info = run_info_lookup (run->id);
  g_autofree char *skill = NULL;
  g_autofree char *version = NULL;
  g_autofree char *summary = NULL;
  g_autoptr(JsonNode) report = NULL;
  JsonObject *report_object;
  JsonObject *record;
  JsonObject *result;
  gint64 end = run->finished_at ? run->finished_at : g_get_real_time ();

  if (!skill_of (data, &skill, &version))
    return NULL;
  report = sight_report_to_json (data);
  report_object = json_node_get_object (report);
  summary = sight_report_summary (data);

  record = json_object_new ();
  json_object_set_string_member (record, "runId", run->id);
  json_object_set_string_member (record, "skill", skill);
  json_object_set_string_member (record, "version", version);
  if (info != NULL && info->session_id != NULL)
    json_object_set_string_member (record, "sessionId", info->session_id);
  json_object_set_string_member (record, "status", run_status (data, info));
  if (json_object_has_member (report_object, "startedAt"))
    json_object_set_member (record, "startedAt",
                            json_object_dup_member (report_object, "startedAt"));
  json_object_set_int_member (record, "ms", MAX (0, end - run->started_at) / 1000);
  json_object_set_string_member (record, "summary", summary);
  json_object_set_member (record, "counts", json_object_dup_member (report_object, "counts"));
  result = json_object_new ();
  json_object_set_member (result, "verdict", json_object_dup_member (report_object, "verdict"));
  if (run->code != NULL)
    json_object_set_string_member (result, "code", run->code);
  if (run->explanation != NULL)
    json_object_set_string_member (result, "reason", run->explanation);
  json_object_set_member (result, "findings", json_object_dup_member (report_object, "findings"));
  json_object_set_object_member (record, "result", result);
  json_object_set_boolean_member (record, "hasReport", run->verdict != SIGHT_RUN_VERDICT_RUNNING);
  return record;
}

char *
sight_skill_run_text (const SightRunData *data)
{
  const SightRunRecord *run = data->run;
  RunInfo *info = run_info_lookup (run->id);
  g_autofree char *skill = NULL;
  g_autofree char *version = NULL;
  g_autofree char *summary = sight_report_summary (data);
  GString *text = g_string_new (NULL);
  guint shown = 0;

  if (!skill_of (data, &skill, &version))
    return g_string_free (text, FALSE);
  g_string_append_printf (text, "Skill %s, version %s, run %s: %s.\n%s", skill, version, run->id,
                          run_status (data, info), summary);
  if (run->verdict != SIGHT_RUN_VERDICT_PASS && run->verdict != SIGHT_RUN_VERDICT_RUNNING &&
      run->explanation != NULL)
    {
      g_autofree char *why = sight_text_sanitize (run->explanation, 500);

      g_string_append_printf (text, "\nReason: %s", why);
    }
  g_string_append_printf (text, "\nSteps: %u passed, %u failed, %u skipped, of %u.",
                          run->n_steps_passed, run->n_steps_failed, run->n_steps_skipped,
                          data->steps ? data->steps->len : 0);
  for (guint i = 0; data->steps != NULL && i < data->steps->len; i++)
    {
      const SightStepRecord *step = g_ptr_array_index (data->steps, i);
      g_autofree char *why = NULL;

      if (step->verdict != SIGHT_RUN_VERDICT_FAIL && step->verdict != SIGHT_RUN_VERDICT_ERROR)
        continue;
      if (shown++ == FAILED_STEPS_IN_TEXT)
        break;
      if (shown == 1)
        g_string_append (text, "\nFailed steps:");
      why = sight_text_sanitize (step->explanation ? step->explanation
                                                   : step->code ? step->code : "failed", 500);
      g_string_append_printf (text, "\n- Step %u (%s): %s", step->index + 1,
                              step->label ? step->label : step->kind, why);
    }
  return g_string_free (text, FALSE);
}
