/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-mcp-skill-tools"

#include "config.h"

#include "sight-mcp-runner-private.h"

#include "sight-error.h"
#include "sight-mcp-schema.h"
#include "sight-skill.h"

/* list_skills, run_skill, get_skill_run and one skill_<name> tool per skill
 * (sight-skill.h). A skill run is a run in the store; the tools that wait
 * read it again while it runs. */

static JsonObject *
object_member (JsonObject *object,
               const char *name)
{
  JsonNode *node = object ? json_object_get_member (object, name) : NULL;

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

static void
return_json_object (SightMcpToolCall *call,
                    JsonObject       *object)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  g_autofree char *text = NULL;

  json_node_set_object (node, object);
  text = json_to_string (node, FALSE);
  sight_mcp_tool_call_return_result (call, text, object, FALSE);
}

/* list_skills */

static void
list_skills_handler (SightMcpToolCall *call,
                     gpointer          user_data)
{
  g_autoptr(GPtrArray) skills = sight_skill_list ();
  g_autoptr(JsonObject) structured = json_object_new ();
  g_autoptr(JsonArray) list = json_array_new ();

  for (guint i = 0; i < skills->len; i++)
    json_array_add_element (list, sight_skill_to_json (g_ptr_array_index (skills, i)));
  json_object_set_array_member (structured, "skills", g_steal_pointer (&list));
  return_json_object (call, structured);
}

/* A run's record, as get_skill_run and skill_<name> return it */

static const char * const error_statuses[] = { "error", "denied", "cancelled", NULL };

static void
skill_run_ready_cb (SightMcpToolCall *call,
                    SightRunData     *data,
                    const GError     *error,
                    gpointer          user_data)
{
  SightStore *store = user_data;
  g_autoptr(JsonObject) record = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GString) out = NULL;
  const char *status;

  if (data == NULL && g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT))
    record = NULL;
  else if (data == NULL)
    {
      sight_mcp_tool_call_return_gerror (call, error);
      g_object_unref (store);
      return;
    }
  else
    record = sight_skill_run_to_json (data);
  if (record == NULL)
    {
      JsonObject *args = sight_mcp_tool_call_get_arguments (call);
      const char *id = json_object_get_string_member_with_default (args, "runId", NULL);
      g_autofree char *safe = sight_text_sanitize (id ? id : "?", 100);

      sight_mcp_tool_call_return_error (call, "not_found", NULL, "No skill run %s", safe);
      g_object_unref (store);
      return;
    }

  text = sight_skill_run_text (data);
  out = g_string_new (text);
  status = json_object_get_string_member (record, "status");
  if (g_str_equal (status, "running"))
    g_string_append_printf (out, "\nThe run goes on: call get_skill_run with the runId %s, or "
                            "get_report for the report.", data->run->id);
  else
    {
      g_autofree char *url = _sight_mcp_write_html_report (store, data);

      if (url != NULL)
        {
          json_object_set_string_member (record, "reportUrl", url);
          g_string_append_printf (out, "\nReport: %s", url);
        }
    }
  sight_mcp_tool_call_return_result (call, out->str, record,
                                     g_strv_contains (error_statuses, status));
  g_object_unref (store);
}

static void
wait_for_skill_run (SightMcpToolCall *call,
                    SightStore       *store,
                    const char       *run_id)
{
  _sight_mcp_wait_for_run (call, store, run_id, skill_run_ready_cb, g_object_ref (store));
}

/* run_skill */

static GStrv
string_array (JsonObject *object,
              const char *name)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  JsonNode *node = json_object_get_member (object, name);

  if (node != NULL && JSON_NODE_HOLDS_ARRAY (node))
    for (guint i = 0; i < json_array_get_length (json_node_get_array (node)); i++)
      g_strv_builder_add (builder, json_array_get_string_element (json_node_get_array (node), i));
  return g_strv_builder_end (builder);
}

static void
started_run_loaded_cb (GObject      *source,
                       GAsyncResult *result,
                       gpointer      user_data)
{
  g_autoptr(SightMcpToolCall) call = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightRunData) data = sight_store_load_run_finish (SIGHT_STORE (source), result, &error);
  g_autoptr(JsonObject) structured = NULL;
  g_autoptr(JsonObject) record = NULL;

  if (data == NULL)
    {
      sight_mcp_tool_call_return_gerror (call, error);
      return;
    }
  record = sight_skill_run_to_json (data);
  structured = json_object_new ();
  json_object_set_string_member (structured, "runId", data->run->id);
  if (json_object_has_member (record, "sessionId"))
    json_object_set_member (structured, "sessionId", json_object_dup_member (record, "sessionId"));
  json_object_set_member (structured, "status", json_object_dup_member (record, "status"));
  /* Runs start at once: there is no queue on one machine. */
  json_object_set_string_member (structured, "placement", "started");
  return_json_object (call, structured);
}

static void
run_skill_handler (SightMcpToolCall *call,
                   gpointer          user_data)
{
  JsonObject *args = sight_mcp_tool_call_get_arguments (call);
  g_autoptr(GError) error = NULL;
  g_autoptr(SightSkill) skill = NULL;
  g_autoptr(JsonObject) inputs = NULL;
  g_auto(GStrv) grant = string_array (args, "grant");
  g_autofree char *run_id = NULL;
  SightStore *store = sight_store_get_default (&error);

  if (store == NULL)
    {
      sight_mcp_tool_call_return_gerror (call, error);
      return;
    }
  skill = sight_skill_find (json_object_get_string_member (args, "name"),
                            json_object_get_string_member_with_default (args, "version", NULL),
                            &error);
  if (skill == NULL)
    {
      sight_mcp_tool_call_return_gerror (call, error);
      return;
    }
  inputs = object_member (args, "inputs") ? json_object_ref (object_member (args, "inputs"))
                                          : json_object_new ();
  /* run_skill does not wait: the run is not tied to the call. */
  run_id = sight_skill_run_start (store, skill, inputs, (const char * const *) grant,
                                  object_member (args, "session"), NULL, &error);
  if (run_id == NULL)
    {
      sight_mcp_tool_call_return_gerror (call, error);
      return;
    }
  sight_store_load_run_async (store, run_id, NULL, started_run_loaded_cb, g_object_ref (call));
}

/* get_skill_run */

static void
get_skill_run_handler (SightMcpToolCall *call,
                       gpointer          user_data)
{
  g_autoptr(GError) error = NULL;
  SightStore *store = sight_store_get_default (&error);

  if (store == NULL)
    {
      sight_mcp_tool_call_return_gerror (call, error);
      return;
    }
  wait_for_skill_run (call, store,
                      json_object_get_string_member (sight_mcp_tool_call_get_arguments (call),
                                                     "runId"));
}

/* skill_<name> */

static void
skill_tool_handler (SightMcpToolCall *call,
                    gpointer          user_data)
{
  const char *name = user_data;
  JsonObject *args = sight_mcp_tool_call_get_arguments (call);
  JsonObject *options = object_member (args, "options");
  g_autoptr(JsonObject) inputs = json_object_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SightSkill) skill = NULL;
  g_autoptr(GCancellable) job = NULL;
  g_autoptr(GStrvBuilder) grant = g_strv_builder_new ();
  g_auto(GStrv) granted = NULL;
  g_autofree char *run_id = NULL;
  SightStore *store = sight_store_get_default (&error);
  const char * const *permissions;
  JsonObjectIter iter;
  const char *member;
  JsonNode *value;

  if (store == NULL || (skill = sight_skill_find (name, NULL, &error)) == NULL)
    {
      sight_mcp_tool_call_return_gerror (call, error);
      return;
    }
  json_object_iter_init (&iter, args);
  while (json_object_iter_next (&iter, &member, &value))
    if (!g_str_equal (member, "options") && !g_str_equal (member, "confirm"))
      json_object_set_member (inputs, member, json_node_copy (value));

  /* The typed tool grants what the skill needs; active probes only after
   * the user confirmed. */
  permissions = sight_skill_get_permissions (skill);
  for (guint i = 0; permissions[i] != NULL; i++)
    {
      if (g_str_equal (permissions[i], "active_scan") &&
          !json_object_get_boolean_member_with_default (args, "confirm", FALSE))
        {
          sight_mcp_tool_call_return_error (call, "invalid_input", NULL,
                                            "confirm: must be true, and set only after the user "
                                            "confirmed they may test the target");
          return;
        }
      g_strv_builder_add (grant, permissions[i]);
    }
  granted = g_strv_builder_end (grant);

  job = _sight_mcp_job_cancellable (call);
  run_id = sight_skill_run_start (store, skill, inputs, (const char * const *) granted,
                                  object_member (options, "session"), job, &error);
  if (run_id == NULL)
    {
      sight_mcp_tool_call_return_gerror (call, error);
      return;
    }
  wait_for_skill_run (call, store, run_id);
}

/* Skill runs cannot sign in yet: refused before the schema. */
static void
check_skill_tool (JsonObject *arguments,
                  JsonArray  *issues)
{
  static const char * const sign_in[] = {
    "credentials", "profileId", "persistProfile", "profileName", "extensionIds", NULL
  };
  JsonObject *session = object_member (object_member (arguments, "options"), "session");

  for (guint i = 0; session != NULL && sign_in[i] != NULL; i++)
    if (json_object_has_member (session, sign_in[i]))
      {
        g_autofree char *path = g_strdup_printf ("options/session/%s", sign_in[i]);
        g_autofree char *message =
          g_strdup_printf ("Signed-in skill runs are not available yet: remove session.%s",
                           sign_in[i]);

        sight_mcp_schema_add_issue (issues, path, message);
      }
}

static void
add_skill_tool (SightMcpRegistry *registry,
                SightSkill       *skill)
{
  SightMcpTool *run_skill = sight_mcp_registry_lookup (registry, "run_skill");
  SightMcpTool *get_skill_run = sight_mcp_registry_lookup (registry, "get_skill_run");
  JsonObject *run_skill_properties =
    object_member (json_node_get_object (sight_mcp_tool_get_input_schema (run_skill)),
                   "properties");
  g_autofree char *tool = sight_skill_tool_name (skill);
  g_autofree char *title = g_strdup_printf ("Run the skill %s", sight_skill_get_name (skill));
  g_autofree char *description = NULL;
  g_autoptr(JsonObject) schema = json_object_new ();
  g_autoptr(JsonObject) properties = sight_skill_input_properties (skill);
  g_autoptr(JsonObject) options = json_object_new ();
  g_autoptr(JsonObject) options_properties = json_object_new ();
  g_autoptr(JsonObject) wait = json_object_new ();
  g_autoptr(JsonArray) required = json_array_new ();
  g_autoptr(JsonObject) annotations = json_object_new ();
  g_auto(GStrv) required_inputs = sight_skill_required_inputs (skill);
  const char * const *permissions = sight_skill_get_permissions (skill);
  JsonNode *output = NULL;
  SightMcpToolInfo info = { 0 };

  description = g_strdup_printf ("%s (skill %s, version %s; waits for the verdict, 30 s by "
                                 "default, up to 120 s)",
                                 *sight_skill_get_description (skill)
                                 ? sight_skill_get_description (skill) : "A skill",
                                 sight_skill_get_name (skill), sight_skill_get_version (skill));

  json_object_set_string_member (wait, "type", "integer");
  json_object_set_int_member (wait, "minimum", 0);
  json_object_set_int_member (wait, "maximum", 120);
  json_object_set_int_member (wait, "default", 30);
  json_object_set_string_member (wait, "description", "How long to wait for the verdict, 0 to 120 s");
  json_object_set_object_member (options_properties, "waitSeconds", g_steal_pointer (&wait));
  if (run_skill_properties != NULL && json_object_has_member (run_skill_properties, "session"))
    json_object_set_member (options_properties, "session",
                            json_object_dup_member (run_skill_properties, "session"));
  json_object_set_string_member (options, "type", "object");
  json_object_set_object_member (options, "properties", g_steal_pointer (&options_properties));
  json_object_set_boolean_member (options, "additionalProperties", FALSE);
  json_object_set_object_member (properties, "options", g_steal_pointer (&options));
  for (guint i = 0; required_inputs[i] != NULL; i++)
    json_array_add_string_element (required, required_inputs[i]);
  if (permissions != NULL && g_strv_contains (permissions, "active_scan"))
    {
      JsonObject *confirm = json_object_new ();

      json_object_set_string_member (confirm, "type", "boolean");
      json_object_set_string_member (confirm, "description",
                                     "Must be true: set it only after the user confirmed they may "
                                     "test the target");
      json_object_set_object_member (properties, "confirm", confirm);
      json_array_add_string_element (required, "confirm");
    }
  json_object_set_string_member (schema, "type", "object");
  json_object_set_object_member (schema, "properties", g_steal_pointer (&properties));
  json_object_set_array_member (schema, "required", g_steal_pointer (&required));
  json_object_set_boolean_member (schema, "additionalProperties", FALSE);

  json_object_set_string_member (annotations, "title", title);
  json_object_set_boolean_member (annotations, "readOnlyHint", FALSE);
  json_object_set_boolean_member (annotations, "openWorldHint", TRUE);

  if (get_skill_run != NULL)
    {
      g_autoptr(JsonArray) list = sight_mcp_registry_list (registry);

      for (guint i = 0; i < json_array_get_length (list); i++)
        {
          JsonObject *entry = json_array_get_object_element (list, i);

          if (g_str_equal (json_object_get_string_member (entry, "name"), "get_skill_run") &&
              json_object_has_member (entry, "outputSchema"))
            output = json_object_dup_member (entry, "outputSchema");
        }
    }

  info.name = tool;
  info.description = description;
  info.input_schema = schema;
  info.output_schema = output ? json_node_get_object (output) : NULL;
  info.annotations = annotations;
  info.wait_argument = "options/waitSeconds";
  info.wait_default = 30;
  info.wait_cap = 120;
  info.check = check_skill_tool;
  info.handler = skill_tool_handler;
  sight_mcp_registry_add (registry, &info, g_strdup (sight_skill_get_name (skill)), g_free);
  g_clear_pointer (&output, json_node_unref);
}

void
_sight_mcp_skill_tools_install (SightMcpRegistry *registry)
{
  g_autoptr(GPtrArray) skills = sight_skill_list ();
  g_autoptr(GHashTable) named = g_hash_table_new (g_str_hash, g_str_equal);

  sight_mcp_registry_set_handler (registry, "list_skills", list_skills_handler, NULL, NULL);
  sight_mcp_registry_set_handler (registry, "run_skill", run_skill_handler, NULL, NULL);
  sight_mcp_registry_set_handler (registry, "get_skill_run", get_skill_run_handler, NULL, NULL);
  /* One tool per skill name: its newest version (the list has it first). */
  for (guint i = 0; i < skills->len; i++)
    {
      SightSkill *skill = g_ptr_array_index (skills, i);

      if (g_hash_table_contains (named, sight_skill_get_name (skill)))
        continue;
      g_hash_table_add (named, (gpointer) sight_skill_get_name (skill));
      add_skill_tool (registry, skill);
    }
}
