/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-mcp-tools"

#include "config.h"

#include "sight-mcp-tools.h"

#include <gio/gio.h>

#include "sight-mcp-resources.h"
#include "sight-mcp-runner-tools.h"
#include "sight-mcp-schema.h"

static const char * const builtin_names[] = {
  "create_session", "run_task", "get_task", "smoke_test", "get_report", "list_sessions",
  "get_session", "stop_session", "scrape", "screenshot", "pdf", "crawl", "list_skills",
  "run_skill", "get_skill_run", "act", "assert", "wait_for", "extract", NULL,
};

const char * const *
sight_mcp_builtin_tool_names (void)
{
  return builtin_names;
}

/* What each tool waits for before it can do real work. */
static const struct {
  const char *tool;
  const char *needs;
} missing[] = {
  { "create_session", "the runner's sessions" },
  { "run_task", "the runner's tasks" },
  { "get_task", "the runner's tasks" },
  { "smoke_test", "the runner's smoke test" },
  { "get_report", "the runner's reports" },
  { "list_sessions", "the runner's sessions" },
  { "get_session", "the runner's sessions" },
  { "stop_session", "the runner's sessions" },
  { "scrape", "the runner's scrape" },
  { "screenshot", "the runner's screenshot" },
  { "pdf", "the runner's pdf" },
  { "crawl", "the runner's crawl" },
  { "list_skills", "the runner's skills" },
  { "run_skill", "the runner's skills" },
  { "get_skill_run", "the runner's skills" },
  { "act", "the runner's sessions and the agent's steps" },
  { "assert", "the runner's sessions and the agent's steps" },
  { "wait_for", "the runner's sessions and the agent's steps" },
  { "extract", "the runner's sessions and the agent's steps" },
};

static void
unavailable_handler (SightMcpToolCall *call,
                     gpointer          user_data)
{
  const char *name = sight_mcp_tool_call_get_name (call);
  const char *needs = "the runner";

  for (guint i = 0; i < G_N_ELEMENTS (missing); i++)
    if (g_str_equal (missing[i].tool, name))
      needs = missing[i].needs;
  sight_mcp_tool_call_return_error (call, "unavailable", NULL,
                                    "%s is not available in this build of Sightline yet: it "
                                    "needs %s, which this build does not have", name, needs);
}

/* Checks: they see unvalidated arguments. */

static gboolean
has (JsonObject *arguments,
     const char *name)
{
  return json_object_has_member (arguments, name);
}

static gboolean
positive_number (JsonObject *arguments,
                 const char *name)
{
  JsonNode *node = json_object_get_member (arguments, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return FALSE;
  if (json_node_get_value_type (node) == G_TYPE_INT64)
    return json_node_get_int (node) > 0;
  if (json_node_get_value_type (node) == G_TYPE_DOUBLE)
    return json_node_get_double (node) > 0;
  return FALSE;
}

static void
check_create_session (JsonObject *arguments,
                      JsonArray  *issues)
{
  if (has (arguments, "url"))
    sight_mcp_schema_add_issue (issues, "url",
                                "url is not an argument of create_session: use startUrl");
  if (has (arguments, "queueForCapacity") && positive_number (arguments, "waitForCapacityMs"))
    sight_mcp_schema_add_issue (issues, "queueForCapacity",
                                "queueForCapacity does not go together with waitForCapacityMs "
                                "above 0");
}

static void
check_run_task (JsonObject *arguments,
                JsonArray  *issues)
{
  static const char * const new_session_only[] = {
    "startUrl", "engineId", "engineVersion", "record", "headers", "proxyUrl", "allowHosts",
    "credentials",
  };

  if (!has (arguments, "sessionId"))
    return;
  for (guint i = 0; i < G_N_ELEMENTS (new_session_only); i++)
    if (has (arguments, new_session_only[i]))
      {
        g_autofree char *message =
          g_strdup_printf ("%s applies only when run_task opens the session: leave it out "
                           "with sessionId", new_session_only[i]);
        sight_mcp_schema_add_issue (issues, new_session_only[i], message);
      }
}

/* Skill runs (smoke_test, run_skill, skill_<name>) cannot sign in yet. */
static void
check_no_sign_in (JsonObject *session,
                  const char *prefix,
                  JsonArray  *issues)
{
  static const char * const sign_in[] = {
    "credentials", "profileId", "persistProfile", "profileName", "extensionIds",
  };

  for (guint i = 0; i < G_N_ELEMENTS (sign_in); i++)
    if (json_object_has_member (session, sign_in[i]))
      {
        g_autofree char *path = g_strdup_printf ("%s/%s", prefix, sign_in[i]);
        g_autofree char *message =
          g_strdup_printf ("Signed-in skill runs are not available yet: remove session.%s",
                           sign_in[i]);
        sight_mcp_schema_add_issue (issues, path, message);
      }
}

static void
check_skill_session (JsonObject *arguments,
                     JsonArray  *issues)
{
  JsonNode *session = json_object_get_member (arguments, "session");

  if (session != NULL && JSON_NODE_HOLDS_OBJECT (session))
    check_no_sign_in (json_node_get_object (session), "session", issues);
}

static void
check_session_alias (JsonObject *arguments,
                     JsonArray  *issues)
{
  JsonNode *session_id = json_object_get_member (arguments, "sessionId");
  JsonNode *id = json_object_get_member (arguments, "id");

  if (session_id == NULL && id == NULL)
    sight_mcp_schema_add_issue (issues, "sessionId", "sessionId is required");
  else if (session_id != NULL && id != NULL && !json_node_equal (session_id, id))
    sight_mcp_schema_add_issue (issues, "id",
                                "id is a deprecated alias of sessionId and differs from it: "
                                "send sessionId only");
}

static const struct {
  const char        *tool;
  SightMcpToolCheck  check;
} checks[] = {
  { "create_session", check_create_session },
  { "run_task", check_run_task },
  { "smoke_test", check_skill_session },
  { "run_skill", check_skill_session },
  { "get_session", check_session_alias },
  { "stop_session", check_session_alias },
};

static JsonObject *
object_member (JsonObject *object,
               const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

SightMcpRegistry *
sight_mcp_registry_new_builtin (void)
{
  g_autoptr(SightMcpRegistry) registry = sight_mcp_registry_new ();
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  g_autoptr(GError) error = NULL;
  JsonArray *tools;

  bytes = g_resource_lookup_data (sight_mcp_get_resource (),
                                  "/dev/sightline/mcp/sight-mcp-tools.json",
                                  G_RESOURCE_LOOKUP_FLAGS_NONE, &error);
  if (bytes == NULL ||
      !json_parser_load_from_data (parser, g_bytes_get_data (bytes, NULL),
                                   g_bytes_get_size (bytes), &error))
    g_error ("The built-in MCP tool definitions do not load: %s", error->message);

  tools = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)),
                                        "tools");
  for (guint i = 0; i < json_array_get_length (tools); i++)
    {
      JsonObject *definition = json_array_get_object_element (tools, i);
      JsonObject *wait = object_member (definition, "wait");
      SightMcpToolInfo info = { 0 };

      info.name = json_object_get_string_member (definition, "name");
      info.description = json_object_get_string_member (definition, "description");
      info.input_schema = object_member (definition, "inputSchema");
      info.output_schema = object_member (definition, "outputSchema");
      info.annotations = object_member (definition, "annotations");
      if (wait != NULL)
        {
          info.wait_argument = json_object_get_string_member (wait, "argument");
          info.wait_default = json_object_get_int_member (wait, "default");
          info.wait_cap = json_object_get_int_member (wait, "cap");
        }
      for (guint j = 0; j < G_N_ELEMENTS (checks); j++)
        if (g_str_equal (checks[j].tool, info.name))
          info.check = checks[j].check;
      info.handler = unavailable_handler;
      sight_mcp_registry_add (registry, &info, NULL, NULL);
    }

  g_assert (sight_mcp_registry_get_n_tools (registry) == g_strv_length ((char **) builtin_names));
  sight_mcp_runner_tools_install (registry);
  return g_steal_pointer (&registry);
}
