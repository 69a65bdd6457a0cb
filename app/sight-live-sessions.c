/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-live-sessions"

#include "config.h"

#include <glib/gi18n.h>

#include "sight-live-sessions.h"
#include "sight-mcp-http.h"
#include "sight-mcp-tools.h"
#include "sight-observation.h"
#include "sight-session-agent.h"

#define OBSERVE_TIMEOUT_MS 10000
/* After a client's action the page settles a moment before the inspector
 * looks; a burst of actions makes one refresh. */
#define REFRESH_DELAY_MS 250

struct _SightLiveSessions
{
  GtkBox parent_instance;

  GtkMenuButton *serve_button;
  GtkSwitch     *serve_switch;
  GtkLabel      *url_label;
  GtkButton     *copy_button;
  GtkLabel      *help_label;
  GtkDropDown   *dropdown;
  GtkStringList *labels;
  GPtrArray     *sessions;          /* parallel to labels; [0] is NULL */

  /* not owned */
  GtkBox         *page_box;
  SightInspector *inspector;
  SightComposer  *composer;
  /* owned */
  SightWebPage   *own_page;
  SightSession   *shown;
  GCancellable   *observe_cancellable;
  SightAgent     *agent;            /* the shown session's */
  guint           refresh_source;
  SightMcpRegistry *registry;
  SightMcpServer   *server;
  SightMcpHttp     *http;
  GSettings        *settings;         /* NULL without the compiled schema */
  char             *url;
  char             *last_notice;
  gboolean          updating;
};

G_DEFINE_FINAL_TYPE (SightLiveSessions, sight_live_sessions, GTK_TYPE_BOX)

static void
notify_person (SightLiveSessions *self,
               const char        *message)
{
  GtkWidget *overlay = gtk_widget_get_ancestor (GTK_WIDGET (self), ADW_TYPE_TOAST_OVERLAY);

  g_free (self->last_notice);
  self->last_notice = g_strdup (message);
  if (overlay != NULL)
    {
      AdwToast *toast = adw_toast_new (message);

      adw_toast_set_timeout (toast, 5);
      adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay), toast);
    }
}

static void
session_unref0 (gpointer data)
{
  if (data != NULL)
    g_object_unref (data);
}

/* Inspector ---------------------------------------------------------------- */

static void
capture_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(SightLiveSessions) self = user_data;
  g_autoptr(SightObservation) observation = NULL;
  g_autoptr(GError) error = NULL;

  observation = sight_observation_capture_finish (result, &error);
  if (observation == NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_debug ("The inspector keeps its observation: %s", error->message);
  if (observation == NULL || self->inspector == NULL)
    return;
  sight_inspector_set_observation (self->inspector, observation);
}

static void
observe (SightLiveSessions *self,
         SightWebPage      *page)
{
  if (self->inspector == NULL)
    return;
  g_cancellable_cancel (self->observe_cancellable);
  g_clear_object (&self->observe_cancellable);
  self->observe_cancellable = g_cancellable_new ();
  sight_observation_capture_async (page, SIGHT_OBSERVE_FULL_TEXT | SIGHT_OBSERVE_SCREENSHOT |
                                   SIGHT_OBSERVE_PARSE_TREE,
                                   OBSERVE_TIMEOUT_MS, self->observe_cancellable,
                                   capture_cb, g_object_ref (self));
}

static gboolean
refresh_cb (gpointer user_data)
{
  SightLiveSessions *self = user_data;

  self->refresh_source = 0;
  if (self->shown != NULL)
    observe (self, sight_session_get_page (self->shown));
  return G_SOURCE_REMOVE;
}

static void
schedule_refresh (SightLiveSessions *self)
{
  g_clear_handle_id (&self->refresh_source, g_source_remove);
  self->refresh_source = g_timeout_add (REFRESH_DELAY_MS, refresh_cb, self);
}

/* The inspector shows the page as the client's action left it. */
static void
agent_action_cb (SightAgent        *agent,
                 const char        *line,
                 SightLiveSessions *self)
{
  schedule_refresh (self);
}

static void
agent_step_finished_cb (SightAgent        *agent,
                        SightStepResult   *result,
                        SightLiveSessions *self)
{
  schedule_refresh (self);
}

/* The composer's meters and timeline follow the steps the client runs on
 * the shown session; NULL: on nothing. */
static void
follow (SightLiveSessions *self,
        SightSession      *session)
{
  g_autoptr(GError) error = NULL;
  SightAgent *agent = NULL;

  if (session != NULL)
    {
      /* The same agent the session's MCP steps and tasks run with. */
      agent = sight_session_get_agent (session, &error);
      if (agent == NULL)
        g_debug ("Not following %s: %s", sight_session_get_id (session), error->message);
    }
  if (self->agent != NULL)
    g_signal_handlers_disconnect_by_data (self->agent, self);
  g_set_object (&self->agent, agent);
  g_clear_handle_id (&self->refresh_source, g_source_remove);
  if (self->composer != NULL)
    sight_composer_follow_agent (self->composer, agent);
  if (agent == NULL)
    return;
  g_signal_connect (agent, "action-performed", G_CALLBACK (agent_action_cb), self);
  g_signal_connect (agent, "step-finished", G_CALLBACK (agent_step_finished_cb), self);
}

static void
session_load_changed_cb (WebKitWebView     *view,
                         WebKitLoadEvent    event,
                         SightLiveSessions *self)
{
  if (event == WEBKIT_LOAD_FINISHED && self->shown != NULL)
    observe (self, sight_session_get_page (self->shown));
}

/* Showing a page ------------------------------------------------------------- */

static void
show_session (SightLiveSessions *self,
              SightSession      *session)
{
  WebKitWebView *own_view;

  if (self->page_box == NULL || session == self->shown)
    return;
  own_view = sight_web_page_get_web_view (self->own_page);
  if (self->shown != NULL)
    {
      SightWebPage *page = sight_session_get_page (self->shown);
      WebKitWebView *view = sight_web_page_get_web_view (page);

      g_signal_handlers_disconnect_by_data (view, self);
      if (gtk_widget_get_parent (GTK_WIDGET (view)) == GTK_WIDGET (self->page_box))
        gtk_box_remove (self->page_box, GTK_WIDGET (view));
      /* Back in its own toplevel at the viewport its client asked for. */
      sight_web_page_set_headless (page, TRUE);
      g_clear_object (&self->shown);
      follow (self, NULL);
    }
  if (session == NULL)
    {
      gtk_widget_set_visible (GTK_WIDGET (own_view), TRUE);
      observe (self, self->own_page);
      return;
    }

  self->shown = g_object_ref (session);
  {
    SightWebPage *page = sight_session_get_page (session);
    WebKitWebView *view;

    /* While it is watched, the window's allocation is the page's viewport. */
    sight_web_page_set_headless (page, FALSE);
    view = sight_web_page_get_web_view (page);
    gtk_widget_set_hexpand (GTK_WIDGET (view), TRUE);
    gtk_widget_set_vexpand (GTK_WIDGET (view), TRUE);
    gtk_widget_set_visible (GTK_WIDGET (own_view), FALSE);
    gtk_box_append (self->page_box, GTK_WIDGET (view));
    g_signal_connect (view, "load-changed", G_CALLBACK (session_load_changed_cb), self);
    follow (self, session);
    observe (self, page);
  }
}

/* The list ------------------------------------------------------------------- */

static char *
session_label (SightSession *session)
{
  const char *uri = webkit_web_view_get_uri (sight_web_page_get_web_view (
                                               sight_session_get_page (session)));

  if (uri == NULL || *uri == '\0')
    return g_strdup (sight_session_get_id (session));
  /* Translators: a live session in the list: its id, then its page's address */
  return g_strdup_printf (_("%s — %s"), sight_session_get_id (session), uri);
}

static void
rebuild_list (SightLiveSessions *self)
{
  g_autoptr(GPtrArray) all = sight_session_registry_list (sight_session_registry_get_default (),
                                                          G_MAXUINT);
  g_autoptr(GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
  guint selected = 0;

  g_ptr_array_set_size (self->sessions, 0);
  g_ptr_array_add (self->sessions, NULL);
  g_ptr_array_add (labels, g_strdup (_("This window’s page")));
  for (guint i = 0; i < all->len; i++)
    {
      SightSession *session = g_ptr_array_index (all, i);

      if (sight_session_get_status (session) != SIGHT_SESSION_LIVE)
        continue;
      if (session == self->shown)
        selected = self->sessions->len;
      g_ptr_array_add (self->sessions, g_object_ref (session));
      g_ptr_array_add (labels, session_label (session));
    }
  g_ptr_array_add (labels, NULL);

  self->updating = TRUE;
  gtk_string_list_splice (self->labels, 0,
                          g_list_model_get_n_items (G_LIST_MODEL (self->labels)),
                          (const char * const *) labels->pdata);
  gtk_drop_down_set_selected (self->dropdown, selected);
  self->updating = FALSE;
  gtk_widget_set_visible (GTK_WIDGET (self->dropdown), self->sessions->len > 1);
}

static void
selected_cb (GtkDropDown       *dropdown,
             GParamSpec        *pspec,
             SightLiveSessions *self)
{
  guint i = gtk_drop_down_get_selected (dropdown);

  if (self->updating || i == GTK_INVALID_LIST_POSITION || i >= self->sessions->len)
    return;
  show_session (self, g_ptr_array_index (self->sessions, i));
}

static void
session_added_cb (SightSessionRegistry *registry,
                  SightSession         *session,
                  SightLiveSessions    *self)
{
  g_signal_connect_object (sight_web_page_get_web_view (sight_session_get_page (session)),
                           "notify::uri", G_CALLBACK (rebuild_list), self, G_CONNECT_SWAPPED);
  rebuild_list (self);
}

static void
session_closed_cb (SightSessionRegistry *registry,
                   SightSession         *session,
                   SightLiveSessions    *self)
{
  if (session == self->shown)
    {
      g_autofree char *message = NULL;

      /* Translators: %s is a session id such as sess_… */
      message = g_strdup_printf (_("Session %s ended; back to this window’s page"),
                                 sight_session_get_id (session));
      show_session (self, NULL);
      notify_person (self, message);
    }
  rebuild_list (self);
}

/* The server ----------------------------------------------------------------- */

static void
update_server_widgets (SightLiveSessions *self)
{
  gboolean on = self->http != NULL;

  gtk_label_set_text (self->url_label, on ? self->url : _("Not serving"));
  gtk_widget_set_sensitive (GTK_WIDGET (self->copy_button), on);
  gtk_widget_set_visible (GTK_WIDGET (self->help_label), on);
  gtk_menu_button_set_icon_name (self->serve_button,
                                 on ? "network-transmit-receive-symbolic"
                                    : "network-server-symbolic");
  if (gtk_switch_get_active (self->serve_switch) != on)
    gtk_switch_set_active (self->serve_switch, on);
}

static void
stop_server (SightLiveSessions *self)
{
  if (self->http != NULL)
    sight_mcp_http_shutdown (self->http);
  if (self->server != NULL)
    sight_mcp_server_shutdown (self->server);
  g_clear_object (&self->http);
  g_clear_object (&self->server);
  g_clear_object (&self->registry);
  g_clear_pointer (&self->url, g_free);
}

gboolean
sight_live_sessions_set_serving (SightLiveSessions *self,
                                 gboolean           serving,
                                 GError           **error)
{
  g_autofree char *token = NULL;
  g_autofree char *token_path = NULL;
  g_autofree char *help = NULL;
  guint port = 0;

  g_return_val_if_fail (SIGHT_IS_LIVE_SESSIONS (self), FALSE);

  if (!serving)
    {
      stop_server (self);
      update_server_widgets (self);
      if (self->settings != NULL)
        g_settings_set_boolean (self->settings, "mcp-server-enabled", FALSE);
      return TRUE;
    }
  if (self->http != NULL)
    return TRUE;

  /* The token stays in its 0600 file: neither the window nor a log shows it. */
  token = sight_mcp_http_load_or_create_token (NULL, &token_path, NULL, error);
  if (token == NULL)
    {
      update_server_widgets (self);
      return FALSE;
    }
  self->registry = sight_mcp_registry_new_builtin ();
  self->server = sight_mcp_server_new (self->registry);
  self->http = sight_mcp_http_new (self->server, token);
  if (self->settings != NULL)
    port = g_settings_get_uint (self->settings, "mcp-server-port");
  if (!sight_mcp_http_listen (self->http, "127.0.0.1", port, error))
    {
      stop_server (self);
      update_server_widgets (self);
      return FALSE;
    }
  self->url = sight_mcp_http_get_url (self->http);
  /* Translators: %s is the file that holds the MCP bearer token */
  help = g_strdup_printf (_("Point an MCP client at this endpoint (Streamable HTTP) and send "
                            "the header “Authorization: Bearer” with the token kept in %s. "
                            "Sessions the client opens appear under Live Sessions."),
                          token_path);
  gtk_label_set_text (self->help_label, help);
  update_server_widgets (self);
  if (self->settings != NULL)
    g_settings_set_boolean (self->settings, "mcp-server-enabled", TRUE);
  return TRUE;
}

static void
switch_active_cb (GtkSwitch         *sw,
                  GParamSpec        *pspec,
                  SightLiveSessions *self)
{
  g_autoptr(GError) error = NULL;
  gboolean want = gtk_switch_get_active (sw);

  if (want == (self->http != NULL))
    return;
  if (!sight_live_sessions_set_serving (self, want, &error))
    {
      g_autofree char *message = g_strdup_printf (_("Could not start the MCP server: %s"),
                                                  error->message);

      notify_person (self, message);
    }
}

static void
copy_cb (GtkButton         *button,
         SightLiveSessions *self)
{
  if (self->url == NULL)
    return;
  gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (self)), self->url);
  notify_person (self, _("Endpoint copied"));
}

/* GObject ------------------------------------------------------------------ */

static void
sight_live_sessions_dispose (GObject *object)
{
  SightLiveSessions *self = SIGHT_LIVE_SESSIONS (object);

  g_signal_handlers_disconnect_by_data (sight_session_registry_get_default (), self);
  /* No more observations: the inspector may go before this widget. */
  if (self->inspector != NULL)
    g_object_remove_weak_pointer (G_OBJECT (self->inspector), (gpointer *) &self->inspector);
  self->inspector = NULL;
  if (self->shown != NULL && self->page_box != NULL)
    show_session (self, NULL);
  g_clear_object (&self->shown);
  follow (self, NULL);
  if (self->observe_cancellable != NULL)
    g_cancellable_cancel (self->observe_cancellable);
  g_clear_object (&self->observe_cancellable);
  stop_server (self);
  g_clear_object (&self->own_page);
  g_clear_object (&self->settings);
  if (self->page_box != NULL)
    g_object_remove_weak_pointer (G_OBJECT (self->page_box), (gpointer *) &self->page_box);
  g_clear_pointer (&self->sessions, g_ptr_array_unref);
  g_clear_pointer (&self->last_notice, g_free);
  if (self->composer != NULL)
    g_object_remove_weak_pointer (G_OBJECT (self->composer), (gpointer *) &self->composer);
  self->page_box = NULL;
  self->inspector = NULL;
  self->composer = NULL;

  G_OBJECT_CLASS (sight_live_sessions_parent_class)->dispose (object);
}

static void
sight_live_sessions_class_init (SightLiveSessionsClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = sight_live_sessions_dispose;
}

static void
sight_live_sessions_init (SightLiveSessions *self)
{
  GtkWidget *popover, *box, *row, *title;

  gtk_orientable_set_orientation (GTK_ORIENTABLE (self), GTK_ORIENTATION_HORIZONTAL);
  gtk_box_set_spacing (GTK_BOX (self), 6);
  /* [0] is NULL: the window’s own page. */
  self->sessions = g_ptr_array_new_with_free_func (session_unref0);

  /* Live sessions */
  self->labels = gtk_string_list_new (NULL);
  self->dropdown = GTK_DROP_DOWN (gtk_drop_down_new (G_LIST_MODEL (self->labels), NULL));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->dropdown), _("Live Sessions"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->dropdown),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, _("Live Sessions"), -1);
  g_signal_connect (self->dropdown, "notify::selected", G_CALLBACK (selected_cb), self);
  gtk_box_append (GTK_BOX (self), GTK_WIDGET (self->dropdown));

  /* Serve MCP */
  box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  title = gtk_label_new (_("Serve MCP on This Computer"));
  gtk_widget_set_hexpand (title, TRUE);
  gtk_label_set_xalign (GTK_LABEL (title), 0);
  gtk_box_append (GTK_BOX (row), title);
  self->serve_switch = GTK_SWITCH (gtk_switch_new ());
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->serve_switch),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, _("Serve MCP"), -1);
  g_signal_connect (self->serve_switch, "notify::active", G_CALLBACK (switch_active_cb), self);
  gtk_box_append (GTK_BOX (row), GTK_WIDGET (self->serve_switch));
  gtk_box_append (GTK_BOX (box), row);

  row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  self->url_label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_selectable (self->url_label, TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self->url_label), TRUE);
  gtk_label_set_xalign (self->url_label, 0);
  gtk_box_append (GTK_BOX (row), GTK_WIDGET (self->url_label));
  self->copy_button = GTK_BUTTON (gtk_button_new_from_icon_name ("edit-copy-symbolic"));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->copy_button), _("Copy Endpoint"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->copy_button),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, _("Copy Endpoint"), -1);
  g_signal_connect (self->copy_button, "clicked", G_CALLBACK (copy_cb), self);
  gtk_box_append (GTK_BOX (row), GTK_WIDGET (self->copy_button));
  gtk_box_append (GTK_BOX (box), row);

  self->help_label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (self->help_label, TRUE);
  gtk_label_set_max_width_chars (self->help_label, 40);
  gtk_label_set_xalign (self->help_label, 0);
  gtk_widget_add_css_class (GTK_WIDGET (self->help_label), "dim-label");
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (self->help_label));

  popover = gtk_popover_new ();
  gtk_popover_set_child (GTK_POPOVER (popover), box);
  self->serve_button = GTK_MENU_BUTTON (gtk_menu_button_new ());
  gtk_menu_button_set_popover (self->serve_button, popover);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->serve_button), _("Serve MCP…"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->serve_button),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, _("Serve MCP…"), -1);
  gtk_box_append (GTK_BOX (self), GTK_WIDGET (self->serve_button));

  {
    GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
    g_autoptr(GSettingsSchema) schema = NULL;

    if (source != NULL)
      schema = g_settings_schema_source_lookup (source, APP_ID, TRUE);
    if (schema != NULL)
      self->settings = g_settings_new (APP_ID);
  }
  update_server_widgets (self);
  rebuild_list (self);
  g_signal_connect (sight_session_registry_get_default (), "session-added",
                    G_CALLBACK (session_added_cb), self);
  g_signal_connect (sight_session_registry_get_default (), "session-closed",
                    G_CALLBACK (session_closed_cb), self);
}

/* The composer's own steps (Run, the Test page's) run on the window's page:
 * if a client's session is shown, the window's page comes back first, so
 * that what runs is what you see. */
static void
own_step_started_cb (SightComposer     *composer,
                     const char        *kind,
                     const char        *instruction,
                     SightLiveSessions *self)
{
  if (self->shown != NULL)
    gtk_drop_down_set_selected (self->dropdown, 0);
}

void
sight_live_sessions_attach (SightLiveSessions *self,
                            GtkBox            *page_box,
                            SightWebPage      *own_page,
                            SightInspector    *inspector,
                            SightComposer     *composer)
{
  g_return_if_fail (SIGHT_IS_LIVE_SESSIONS (self));
  g_return_if_fail (self->page_box == NULL);
  /* Weak: the window may dispose the page box before this widget. */
  self->page_box = page_box;
  g_object_add_weak_pointer (G_OBJECT (page_box), (gpointer *) &self->page_box);
  g_set_object (&self->own_page, own_page);
  self->inspector = inspector;
  if (inspector != NULL)
    g_object_add_weak_pointer (G_OBJECT (inspector), (gpointer *) &self->inspector);
  self->composer = composer;
  if (composer != NULL)
    {
      g_object_add_weak_pointer (G_OBJECT (composer), (gpointer *) &self->composer);
      g_signal_connect_object (composer, "step-started", G_CALLBACK (own_step_started_cb),
                               self, 0);
    }
  /* The server comes back on where the person left it on. */
  if (self->settings != NULL && g_settings_get_boolean (self->settings, "mcp-server-enabled"))
    {
      g_autoptr(GError) error = NULL;

      if (!sight_live_sessions_set_serving (self, TRUE, &error))
        g_warning ("Could not start the MCP server: %s", error->message);
    }
}

gboolean
sight_live_sessions_get_serving (SightLiveSessions *self)
{
  g_return_val_if_fail (SIGHT_IS_LIVE_SESSIONS (self), FALSE);
  return self->http != NULL;
}

const char *
sight_live_sessions_get_url (SightLiveSessions *self)
{
  g_return_val_if_fail (SIGHT_IS_LIVE_SESSIONS (self), NULL);
  return self->url;
}

guint
sight_live_sessions_get_port (SightLiveSessions *self)
{
  g_return_val_if_fail (SIGHT_IS_LIVE_SESSIONS (self), 0);
  return self->http != NULL ? sight_mcp_http_get_port (self->http) : 0;
}

GtkSwitch *
sight_live_sessions_get_switch (SightLiveSessions *self)
{
  g_return_val_if_fail (SIGHT_IS_LIVE_SESSIONS (self), NULL);
  return self->serve_switch;
}

GtkDropDown *
sight_live_sessions_get_dropdown (SightLiveSessions *self)
{
  g_return_val_if_fail (SIGHT_IS_LIVE_SESSIONS (self), NULL);
  return self->dropdown;
}

SightSession *
sight_live_sessions_get_shown (SightLiveSessions *self)
{
  g_return_val_if_fail (SIGHT_IS_LIVE_SESSIONS (self), NULL);
  return self->shown;
}

const char *
sight_live_sessions_get_last_notice (SightLiveSessions *self)
{
  g_return_val_if_fail (SIGHT_IS_LIVE_SESSIONS (self), NULL);
  return self->last_notice;
}

void
sight_live_sessions_popup (SightLiveSessions *self)
{
  g_return_if_fail (SIGHT_IS_LIVE_SESSIONS (self));
  gtk_menu_button_popup (self->serve_button);
}
