/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-web-page"

#include "config.h"

#include "sight-web-page.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

#include "sight-error.h"
#include "sight-origin-policy.h"
#include "sight-web-page-private.h"

/* ----------------------------------------------------------------------- */
/* Allowed origins: the subresource filter, navigations and popups         */

#define FILTER_COMPILE_TIMEOUT_MS 10000
#define COMPILED_FILTERS_MAX 8

typedef struct {
  SightWebPage                 *page;        /* owned until the compile ends */
  guint                         generation;
  char                         *rules;       /* what was compiled, its key in the cache */
  char                         *dir;         /* the store's folder, removed after */
  WebKitUserContentFilterStore *store;
} FilterCompile;

/* The filters compiled in this process, by their content rules: pages
 * guarded alike (every test of a suite on one site) share one compile, and
 * their loads do not wait for another. A compiled filter is immutable, and
 * WebKit hands the same rules to each content manager it is added to. */
static GHashTable *compiled_filters;   /* rules → WebKitUserContentFilter */

static WebKitUserContentFilter *
compiled_filter_lookup (const char *rules)
{
  return compiled_filters != NULL ? g_hash_table_lookup (compiled_filters, rules) : NULL;
}

static void
compiled_filter_add (const char              *rules,
                     WebKitUserContentFilter *filter)
{
  if (compiled_filters == NULL)
    compiled_filters = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                              (GDestroyNotify) webkit_user_content_filter_unref);
  /* Rules seldom differ within a run; a run that keeps changing them keeps
   * only its latest few. */
  if (g_hash_table_size (compiled_filters) >= COMPILED_FILTERS_MAX)
    g_hash_table_remove_all (compiled_filters);
  g_hash_table_replace (compiled_filters, g_strdup (rules), webkit_user_content_filter_ref (filter));
}

static void
remove_store_dir (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *file = g_build_filename (path, name, NULL);

      if (g_unlink (file) != 0)
        g_warning ("Could not remove %s: %s", file, g_strerror (errno));
    }
  if (g_rmdir (path) != 0)
    g_warning ("Could not remove %s: %s", path, g_strerror (errno));
}

/* The filter is in (@filter; NULL when the list was dropped meanwhile) or
 * cannot be (@error): the load waiting for it starts, or fails with @error,
 * as does every later one. */
static void
filter_settle (SightWebPage            *self,
               WebKitUserContentFilter *filter,
               GError                  *error)
{
  g_autofree char *uri = g_steal_pointer (&self->deferred_uri);
  g_autoptr(GPtrArray) held = g_steal_pointer (&self->held);

  g_clear_handle_id (&self->filter_timeout, g_source_remove);
  /* What the page started while the filter compiled goes on with it (if
   * the list, which may have changed since, still allows it), or not at all. */
  for (guint i = 0; held != NULL && i < held->len; i++)
    {
      WebKitPolicyDecision *decision = g_ptr_array_index (held, i);
      WebKitNavigationAction *action = webkit_navigation_policy_decision_get_navigation_action (
        WEBKIT_NAVIGATION_POLICY_DECISION (decision));
      const char *target = webkit_uri_request_get_uri (webkit_navigation_action_get_request (action));

      if (error == NULL &&
          (self->origin_policy == NULL || sight_origin_policy_allows (self->origin_policy, target)))
        webkit_policy_decision_use (decision);
      else
        webkit_policy_decision_ignore (decision);
    }
  if (error != NULL)
    {
      _sight_web_page_add_log_entry (self, SIGHT_LOG_PAGE_ERROR, NULL, error->message, NULL, 0);
      self->filter_error = error;
      if (uri != NULL && self->load_op != NULL)
        {
          self->load_op->load_error = g_error_copy (error);
          _sight_web_page_load_op_check (self->load_op);
        }
      return;
    }
  if (filter != NULL)
    {
      self->content_filter = webkit_user_content_filter_ref (filter);
      webkit_user_content_manager_add_filter (self->content, filter);
    }
  if (uri != NULL && self->load_op != NULL)
    webkit_web_view_load_uri (self->view, uri);
}

static gboolean
filter_timeout_cb (gpointer user_data)
{
  SightWebPage *self = user_data;

  self->filter_timeout = 0;
  self->filter_generation++;   /* a late result is dropped */
  filter_settle (self, NULL,
                 g_error_new (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                              "The allowed-origins subresource filter was not compiled "
                              "within %d s; the page is not loaded unguarded",
                              FILTER_COMPILE_TIMEOUT_MS / 1000));
  return G_SOURCE_REMOVE;
}

static void
filter_saved_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  FilterCompile *compile = user_data;
  SightWebPage *self = compile->page;
  g_autoptr(GError) error = NULL;
  WebKitUserContentFilter *filter;

  filter = webkit_user_content_filter_store_save_finish (compile->store, result, &error);
  /* WebKit keeps the compiled rules mapped; the file is not read again. */
  remove_store_dir (compile->dir);
  if (filter != NULL)
    compiled_filter_add (compile->rules, filter);
  if (compile->generation == self->filter_generation)
    {
      if (filter != NULL)
        filter_settle (self, filter, NULL);
      else
        filter_settle (self, NULL,
                       g_error_new (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                    "The allowed-origins subresource filter could not be "
                                    "compiled (%s); the page is not loaded unguarded",
                                    error->message));
    }
  g_clear_pointer (&filter, webkit_user_content_filter_unref);
  g_object_unref (compile->store);
  g_free (compile->rules);
  g_free (compile->dir);
  g_object_unref (compile->page);
  g_free (compile);
}

/* Compiles the policy's content rules in a store of our own, in a temporary
 * folder; loads wait for it (see sight_web_page_load_async). Rules this
 * process compiled before are in at once. */
static void
filter_compile (SightWebPage *self)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *rules = sight_origin_policy_to_content_rules (self->origin_policy);
  WebKitUserContentFilter *compiled = compiled_filter_lookup (rules);
  g_autoptr(GBytes) source = NULL;
  FilterCompile *compile;
  char *dir;

  if (compiled != NULL)
    {
      filter_settle (self, compiled, NULL);
      return;
    }
  dir = g_dir_make_tmp ("sightline-filter-XXXXXX", &error);
  if (dir == NULL)
    {
      filter_settle (self, NULL,
                     g_error_new (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                  "No folder for the allowed-origins subresource filter: %s",
                                  error->message));
      return;
    }
  compile = g_new0 (FilterCompile, 1);
  compile->page = g_object_ref (self);
  compile->generation = self->filter_generation;
  compile->dir = dir;
  compile->store = webkit_user_content_filter_store_new (dir);
  source = g_bytes_new (rules, strlen (rules));
  compile->rules = g_steal_pointer (&rules);
  self->filter_timeout = g_timeout_add (FILTER_COMPILE_TIMEOUT_MS, filter_timeout_cb, self);
  webkit_user_content_filter_store_save (compile->store, "allowed-origins", source, NULL,
                                         filter_saved_cb, compile);
}

gboolean
sight_web_page_set_allowed_origins (SightWebPage       *self,
                                    const char * const *origins,
                                    GError            **error)
{
  SightOriginPolicy *policy = NULL;

  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (self), FALSE);

  if (origins != NULL && origins[0] != NULL)
    {
      policy = sight_origin_policy_new (origins, error);
      if (policy == NULL)
        return FALSE;
    }
  g_clear_pointer (&self->origin_policy, sight_origin_policy_unref);
  self->origin_policy = policy;
  self->filter_generation++;
  g_clear_handle_id (&self->filter_timeout, g_source_remove);
  g_clear_error (&self->filter_error);
  if (self->content_filter != NULL)
    webkit_user_content_manager_remove_filter (self->content, self->content_filter);
  g_clear_pointer (&self->content_filter, webkit_user_content_filter_unref);
  if (policy != NULL)
    filter_compile (self);
  else if (self->deferred_uri != NULL || self->held != NULL)
    filter_settle (self, NULL, NULL);
  return TRUE;
}

/* Navigations (main frame and frames, redirects included) and new windows
 * outside the allowed origins are ignored before any request leaves. */
gboolean
_sight_web_page_decide_policy_cb (WebKitWebView            *view,
                                  WebKitPolicyDecision     *decision,
                                  WebKitPolicyDecisionType  type,
                                  SightWebPage             *self)
{
  WebKitNavigationAction *action;
  const char *uri;
  g_autofree char *text = NULL;
  SightPageOp *op;

  if (self->origin_policy == NULL || type == WEBKIT_POLICY_DECISION_TYPE_RESPONSE)
    return FALSE;
  action = webkit_navigation_policy_decision_get_navigation_action (
    WEBKIT_NAVIGATION_POLICY_DECISION (decision));
  uri = webkit_uri_request_get_uri (webkit_navigation_action_get_request (action));
  if (sight_origin_policy_allows (self->origin_policy, uri))
    {
      /* A navigation the page or a click starts while the subresource filter
       * compiles waits for it (filter_settle), at most its deadline. */
      if (self->filter_timeout == 0)
        return FALSE;
      if (self->held == NULL)
        self->held = g_ptr_array_new_with_free_func (g_object_unref);
      g_ptr_array_add (self->held, g_object_ref (decision));
      return TRUE;
    }
  text = g_strdup_printf ("Blocked %s outside the allowed origins",
                          type == WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION
                            ? "a new window"
                            : webkit_navigation_action_is_redirect (action)
                                ? "a redirect"
                                : "a navigation");
  g_debug ("%s: %s", text, uri);
  _sight_web_page_add_log_entry (self, SIGHT_LOG_BLOCKED, NULL, text, uri, 0);
  /* A load being waited for that is refused, at its start or by a redirect,
   * fails now instead of at its deadline. */
  op = self->load_op;
  if (op != NULL && !op->done && !op->committed && op->load_error == NULL &&
      type == WEBKIT_POLICY_DECISION_TYPE_NAVIGATION_ACTION &&
      (g_strcmp0 (op->requested_uri, uri) == 0 || webkit_navigation_action_is_redirect (action)))
    {
      op->load_error = g_error_new (SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED,
                                    "%s: %s", text, uri);
      webkit_policy_decision_ignore (decision);
      _sight_web_page_load_op_check (op);
      return TRUE;
    }
  webkit_policy_decision_ignore (decision);
  return TRUE;
}

/* ----------------------------------------------------------------------- */
/* Popups                                                                  */

GPtrArray *
sight_web_page_get_popups (SightWebPage *self)
{
  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (self), NULL);
  return self->popups;
}

SightWebPage *
sight_web_page_get_opener (SightWebPage *self)
{
  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (self), NULL);
  return self->opener;
}

GtkWidget *
_sight_web_page_create_cb (WebKitWebView          *view,
                           WebKitNavigationAction *action,
                           SightWebPage           *self)
{
  g_autoptr(SightWebPage) popup = NULL;
  const char *uri = webkit_uri_request_get_uri (webkit_navigation_action_get_request (action));

  /* window.open asks for a view without a policy decision first. An empty
   * URL opens about:blank, which the policy allows. */
  if (self->origin_policy != NULL && uri != NULL && *uri != '\0' &&
      !sight_origin_policy_allows (self->origin_policy, uri))
    {
      g_debug ("Blocked a new window outside the allowed origins: %s", uri);
      _sight_web_page_add_log_entry (self, SIGHT_LOG_BLOCKED, NULL,
                                     "Blocked a new window outside the allowed origins", uri, 0);
      return NULL;
    }
  /* A view must be returned at once: one opened while the subresource
   * filter compiles would load without it. */
  if (self->filter_timeout != 0)
    {
      g_debug ("Blocked a new window while the allowed-origins filter compiles: %s", uri);
      _sight_web_page_add_log_entry (self, SIGHT_LOG_BLOCKED, NULL,
                                     "Blocked a new window opened before the allowed-origins "
                                     "subresource filter was ready", uri, 0);
      return NULL;
    }
  popup = g_object_new (SIGHT_TYPE_WEB_PAGE, "opener", self, NULL);
  sight_web_page_set_viewport (popup, self->width, self->height, self->device_scale);
  if (self->origin_policy != NULL)
    popup->origin_policy = sight_origin_policy_ref (self->origin_policy);
  if (self->content_filter != NULL)
    {
      popup->content_filter = webkit_user_content_filter_ref (self->content_filter);
      webkit_user_content_manager_add_filter (popup->content, popup->content_filter);
    }
  g_ptr_array_add (self->popups, g_object_ref (popup));
  g_signal_emit (self, _sight_web_page_signals[POPUP], 0, popup);
  /* WebKit loads the popup's first page into the returned view. */
  return GTK_WIDGET (popup->view);
}
