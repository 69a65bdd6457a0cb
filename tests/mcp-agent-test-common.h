/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shared by test-mcp-agent-tools.c and test-mcp-task-tools.c: the demo site,
 * the scripted model behind a project file in the test's folder, an MCP
 * server with the built-in tools, and refs on a session's page. */
#pragma once

#include <glib/gstdio.h>

#include "mcp-test-common.h"
#include "sight-demo-site.h"
#include "sight-observation.h"
#include "sight-scripted-model.h"
#include "sight-session.h"

/* The secret of the project's credential: it must never reach an MCP reply. */
#define CANARY "Canary-Pw 7f3a9!<&>/+="

static SightDemoSite *site;
static SightScriptedModel *model;

G_GNUC_UNUSED static void
result_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

G_GNUC_UNUSED static char *
find_ref_in (JsonNode   *node,
             const char *role,
             const char *name)
{
  JsonObject *o;
  JsonArray *children;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return NULL;
  o = json_node_get_object (node);
  if (g_strcmp0 (json_object_get_string_member_with_default (o, "role", NULL), role) == 0 &&
      g_strcmp0 (json_object_get_string_member_with_default (o, "name", NULL), name) == 0)
    return g_strdup (json_object_get_string_member (o, "ref"));
  children = json_object_has_member (o, "children")
             ? json_object_get_array_member (o, "children") : NULL;
  for (guint i = 0; children != NULL && i < json_array_get_length (children); i++)
    {
      char *ref = find_ref_in (json_array_get_element (children, i), role, name);

      if (ref != NULL)
        return ref;
    }
  return NULL;
}

/* The ref the agent will see for @role "@name" on the session's page. */
G_GNUC_UNUSED static char *
session_ref (const char *session_id,
             const char *role,
             const char *name)
{
  SightSession *s = sight_session_registry_lookup (sight_session_registry_get_default (),
                                                   session_id);
  g_autoptr(GError) error = NULL;
  g_autoptr(SightObservation) observation = NULL;
  GAsyncResult *result = NULL;
  char *ref;

  g_assert_nonnull (s);
  sight_observation_capture_async (sight_session_get_page (s), SIGHT_OBSERVE_DEFAULT, 10000, NULL,
                                   result_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  observation = sight_observation_capture_finish (result, &error);
  g_assert_no_error (error);
  g_object_unref (result);
  ref = find_ref_in (sight_observation_get_tree (observation), role, name);
  g_assert_nonnull (ref);
  return ref;
}

G_GNUC_UNUSED static char *
open_session (const char *path)
{
  g_autoptr(JsonObject) created = call ("create_session", "{\"startUrl\":\"%s%s\"}",
                                        sight_demo_site_get_url (site), path);

  g_assert_false (is_error (created));
  return g_strdup (json_object_get_string_member (structured (created), "id"));
}

G_GNUC_UNUSED static void
mcp_agent_test_init (int    *argc,
                     char ***argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *project = NULL;
  g_autofree char *project_path = NULL;
  g_autofree char *origin = NULL;

  g_test_init (argc, argv, NULL);
  /* Runs go to a store of the test's own; the project file in the same
   * folder points the default agent at the scripted model. */
  dir = g_dir_make_tmp ("sight-mcp-tools-XXXXXX", &error);
  g_assert_no_error (error);
  g_setenv ("SIGHTLINE_DATA_DIR", dir, TRUE);
  g_unsetenv ("SIGHTLINE_MODEL");
  gtk_init ();

  site = sight_demo_site_new ();
  sight_demo_site_start (site, 0, &error);
  g_assert_no_error (error);
  origin = g_strndup (sight_demo_site_get_url (site),
                      strlen (sight_demo_site_get_url (site)) - 1);
  model = sight_scripted_model_new (0, &error);
  g_assert_no_error (error);
  /* A model of the built-in price table, so steps have a cost; a password
   * the agent may type on the demo site only. */
  g_setenv ("SIGHT_TEST_CANARY", CANARY, TRUE);
  project = g_strdup_printf ("{\"agents\": {\"default\": {\"model\": \"openai:gpt-4.1\","
                             " \"baseUrl\": \"%s\"}},"
                             " \"credentials\": {\"member.password\": {\"purpose\": \"password\","
                             " \"allowedOrigins\": [\"%s\"], \"source\": {\"env\": \"SIGHT_TEST_CANARY\"}}}}",
                             sight_scripted_model_get_openai_base_url (model), origin);
  project_path = g_build_filename (dir, "sightline.json", NULL);
  g_file_set_contents (project_path, project, -1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_chdir (dir), ==, 0);

  mcp_start ();
}

G_GNUC_UNUSED static int
mcp_agent_test_run (void)
{
  int status;

  status = g_test_run ();

  mcp_stop ();
  sight_demo_site_stop (site);
  g_clear_object (&site);
  g_clear_object (&model);
  return status;
}
