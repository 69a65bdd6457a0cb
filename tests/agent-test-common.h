/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shared by test-agent-*.c: a loopback site, the scripted model, a project whose
 * agents talk to it, and a page. */
#pragma once

#include <string.h>

#include <gtk/gtk.h>
#include <libsoup/soup.h>

#include "sight-agent.h"
#include "sight-error.h"
#include "sight-observation.h"
#include "sight-scripted-model.h"
#include "sight-secret-fields.h"
#include "sight-secrets.h"
#include "sight-step-request.h"

/* The canary: typed as a secret, it must never reach a model request. */
#define CANARY "Canary-Pw 7f3a9!<&>\"/+="

/* Runs one step to its end from a test's body (top level: no loop is
 * running), with one main loop on the thread-default context; the library
 * itself runs none. */
typedef struct {
  GMainLoop    *loop;
  GAsyncResult *result;
} AgentRunWait;

static void
agent_run_done_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  AgentRunWait *wait = user_data;

  wait->result = g_object_ref (result);
  g_main_loop_quit (wait->loop);
}

G_GNUC_UNUSED static SightStepResult *
agent_run (SightAgent        *agent,
           SightStepRequest  *request,
           GCancellable      *cancellable,
           GError           **error)
{
  AgentRunWait wait = { NULL, NULL };
  SightStepResult *result;

  g_assert_cmpint (g_main_depth (), ==, 0);
  wait.loop = g_main_loop_new (g_main_context_get_thread_default (), FALSE);
  /* the step opens from the loop, so it cannot end before the loop runs */
  sight_agent_run_async (agent, request, cancellable, agent_run_done_cb, &wait);
  g_main_loop_run (wait.loop);
  result = sight_agent_run_finish (agent, wait.result, error);
  g_object_unref (wait.result);
  g_main_loop_unref (wait.loop);
  return result;
}

static SoupServer *site;
static char *site_url;
static GHashTable *site_pages;   /* path -> html */
static SightWebPage *shared_page;

G_GNUC_UNUSED static void
site_cb (SoupServer        *server,
         SoupServerMessage *msg,
         const char        *path,
         GHashTable        *query,
         gpointer           user_data)
{
  const char *html = g_hash_table_lookup (site_pages, path);

  if (html == NULL)
    {
      soup_server_message_set_status (msg, 404, NULL);
      soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_STATIC, "missing", 7);
      return;
    }
  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, "text/html; charset=utf-8", SOUP_MEMORY_COPY,
                                    html, strlen (html));
}

G_GNUC_UNUSED static void
site_start (void)
{
  g_autoptr(GError) error = NULL;
  GSList *uris;

  site_pages = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  site = soup_server_new (NULL, NULL);
  soup_server_add_handler (site, NULL, site_cb, NULL, NULL);
  if (!soup_server_listen_local (site, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error))
    g_error ("%s", error->message);
  uris = soup_server_get_uris (site);
  site_url = g_uri_to_string (uris->data);
  if (g_str_has_suffix (site_url, "/"))
    site_url[strlen (site_url) - 1] = '\0';
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
}

G_GNUC_UNUSED static void
site_add (const char *path,
          const char *html)
{
  g_hash_table_insert (site_pages, g_strdup (path), g_strdup (html));
}

G_GNUC_UNUSED static char *
site_origin (void)
{
  return g_strdup (site_url);
}

typedef struct {
  SightScriptedModel *model;
  SightProject       *project;
  SightWebPage       *page;
  SightAgent         *agent;
  char               *evidence_dir;
} Fixture;

G_GNUC_UNUSED static void
store_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

G_GNUC_UNUSED static void
fixture_load (Fixture    *f,
              const char *path)
{
  g_autofree char *url = g_strconcat (site_url, path, NULL);
  g_autoptr(GError) error = NULL;
  GAsyncResult *result = NULL;

  sight_web_page_load_async (f->page, url, SIGHT_WAIT_UNTIL_LOAD, 20000, NULL, store_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  sight_web_page_load_finish (f->page, result, &error);
  g_assert_no_error (error);
  g_object_unref (result);
}

/* A project with a "default" agent on the scripted model (OpenAI wire format) and a
 * "second" agent with its own model name and budgets; @extra is spliced into the
 * top-level object (credentials, defaults). */
G_GNUC_UNUSED static SightProject *
project_new (SightScriptedModel *model,
             const char         *extra)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;
  SightProject *project;

  json = g_strdup_printf ("{\"agents\": {"
                          " \"default\": {\"model\": \"openai:scripted-default\", \"baseUrl\": \"%s\"},"
                          " \"second\": {\"model\": \"openai:scripted-second\", \"baseUrl\": \"%s\","
                          "              \"maxSteps\": 3, \"maxModelCalls\": 4}}%s%s}",
                          sight_scripted_model_get_openai_base_url (model),
                          sight_scripted_model_get_openai_base_url (model),
                          extra ? ", " : "", extra ? extra : "");
  project = sight_project_new_from_data (json, -1, NULL, &error);
  g_assert_no_error (error);
  return project;
}

G_GNUC_UNUSED static void
fixture_set_up (Fixture    *f,
                const char *extra_project)
{
  g_autoptr(GError) error = NULL;

  f->model = sight_scripted_model_new (0, &error);
  g_assert_no_error (error);
  f->project = project_new (f->model, extra_project);
  /* One page (one web process) for the whole program: starting WebKit is the slow
   * part of these tests. */
  if (shared_page == NULL)
    {
      shared_page = sight_web_page_new ();
      sight_web_page_set_viewport (shared_page, 1280, 720, 1.0);
    }
  f->page = g_object_ref (shared_page);
  f->agent = sight_agent_new (f->project, f->page);
  f->evidence_dir = g_dir_make_tmp ("sight-agent-XXXXXX", &error);
  g_assert_no_error (error);
  sight_agent_set_evidence_dir (f->agent, f->evidence_dir);
}

G_GNUC_UNUSED static void
fixture_tear_down (Fixture *f)
{
  g_autoptr(GFile) dir = g_file_new_for_path (f->evidence_dir);
  g_autoptr(GFileEnumerator) e = g_file_enumerate_children (dir, G_FILE_ATTRIBUTE_STANDARD_NAME,
                                                            0, NULL, NULL);
  GFileInfo *info;

  while (e != NULL && (info = g_file_enumerator_next_file (e, NULL, NULL)) != NULL)
    {
      g_autoptr(GFile) child = g_file_get_child (dir, g_file_info_get_name (info));

      g_file_delete (child, NULL, NULL);
      g_object_unref (info);
    }
  g_file_delete (dir, NULL, NULL);
  g_free (f->evidence_dir);
  g_clear_object (&f->agent);
  /* A page a secret was typed into stays tainted: the next test gets another. */
  if (f->page != NULL && f->page == shared_page && sight_web_page_get_secret_fills (f->page) > 0)
    g_clear_object (&shared_page);
  g_clear_object (&f->page);
  g_clear_pointer (&f->project, sight_project_unref);
  g_clear_object (&f->model);
  sight_secrets_forget_all ();
}

/* Checks the request and runs the step: the result, or NULL when the request was
 * refused before the step opened (@error set). */
G_GNUC_UNUSED static SightStepResult *
run_step_full (Fixture       *f,
               SightStepKind  kind,
               const char    *instruction,
               const char    *options_json,
               gint64         remaining_test_ms,
               GError       **error)
{
  g_autoptr(JsonNode) options = NULL;
  SightStepRequest *request;

  if (options_json != NULL)
    {
      options = json_from_string (options_json, NULL);
      g_assert_nonnull (options);
    }
  request = sight_step_request_new (f->project, kind, instruction,
                                    options ? json_node_get_object (options) : NULL,
                                    NULL, remaining_test_ms, error);
  if (request == NULL)
    return NULL;
  return agent_run (f->agent, request, NULL, error);
}

G_GNUC_UNUSED static SightStepResult *
run_step (Fixture       *f,
          SightStepKind  kind,
          const char    *instruction,
          const char    *options_json,
          GError       **error)
{
  return run_step_full (f, kind, instruction, options_json, -1, error);
}

G_GNUC_UNUSED static void
push_judgment (Fixture    *f,
               gboolean    verdict,
               const char *explanation)
{
  sight_scripted_model_push_printf (f->model,
                                    "{\"json\": {\"verdict\": %s, \"explanation\": \"%s\", "
                                    "\"injection\": null}}",
                                    verdict ? "true" : "false", explanation);
}

/* Images (data URLs) in request @index. */
G_GNUC_UNUSED static guint
request_n_images (Fixture *f,
                  guint    index)
{
  const char *body = sight_scripted_model_get_request_body_text (f->model, index);
  guint n = 0;

  for (const char *p = body; (p = strstr (p, "data:image/")) != NULL; p++)
    n++;
  return n;
}

/* The first image of request @index, decoded. */
G_GNUC_UNUSED static GdkPixbuf *
request_image (Fixture *f,
               guint    index)
{
  const char *body = sight_scripted_model_get_request_body_text (f->model, index);
  const char *start = strstr (body, "base64,");
  g_autofree char *b64 = NULL;
  g_autofree guchar *data = NULL;
  g_autoptr(GdkPixbufLoader) loader = gdk_pixbuf_loader_new ();
  gsize len = 0;
  GdkPixbuf *pixbuf;

  g_assert_nonnull (start);
  start += strlen ("base64,");
  b64 = g_strndup (start, strcspn (start, "\""));
  data = g_base64_decode (b64, &len);
  g_assert_true (gdk_pixbuf_loader_write (loader, data, len, NULL));
  g_assert_true (gdk_pixbuf_loader_close (loader, NULL));
  pixbuf = gdk_pixbuf_loader_get_pixbuf (loader);
  g_assert_nonnull (pixbuf);
  return g_object_ref (pixbuf);
}

/* The ref of the first node with @role and @name in a fresh observation (refs
 * persist per document, so the step sees the same). */
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
  children = json_object_has_member (o, "children") ? json_object_get_array_member (o, "children") : NULL;
  for (guint i = 0; children != NULL && i < json_array_get_length (children); i++)
    {
      char *ref = find_ref_in (json_array_get_element (children, i), role, name);

      if (ref != NULL)
        return ref;
    }
  return NULL;
}

G_GNUC_UNUSED static char *
find_ref (Fixture    *f,
          const char *role,
          const char *name)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightObservation) obs = NULL;
  GAsyncResult *result = NULL;
  char *ref;

  sight_observation_capture_async (f->page, SIGHT_OBSERVE_DEFAULT, 10000, NULL, store_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  obs = sight_observation_capture_finish (result, &error);
  g_assert_no_error (error);
  g_object_unref (result);
  ref = find_ref_in (sight_observation_get_tree (obs), role, name);
  if (ref == NULL)
    g_error ("no %s \"%s\" in:\n%s", role, name, sight_observation_get_text (obs));
  return ref;
}

/* The page's own world: read something (the test's view of the page). */
G_GNUC_UNUSED static char *
page_eval_string (Fixture    *f,
                  const char *expression)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) value = NULL;
  g_autofree char *body = g_strdup_printf ("return String (%s);", expression);
  GAsyncResult *result = NULL;

  sight_web_page_evaluate_async (f->page, body, NULL, 5000, NULL, store_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  value = sight_web_page_evaluate_finish (f->page, result, &error);
  g_assert_no_error (error);
  g_object_unref (result);
  return g_strdup (json_node_get_string (value));
}

G_GNUC_UNUSED static void
assert_code (SightStepResult *result,
             GError          *error,
             SightErrorCode   code)
{
  g_assert_nonnull (result);
  if (error != NULL && error->code != (int) code)
    g_test_message ("unexpected %s: %s", sight_error_code_to_string (error->code), error->message);
  g_assert_error (error, SIGHT_ERROR, (int) code);
  g_assert_nonnull (result->error);
  g_assert_cmpint (result->error->code, ==, code);
  g_assert_cmpint (result->blocked, ==, sight_error_code_is_blocked (code));
}
