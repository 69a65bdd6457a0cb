/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-serve-attach"

#include "config.h"

#include "sight-serve-attach.h"

#include "sight-error.h"
#include "sight-headless.h"

#define APP_PATH "/dev/sightline/Sightline"
#define CALL_TIMEOUT_MS 15000

static gboolean
app_is_running (GDBusConnection *bus)
{
  g_autoptr(GVariant) reply = NULL;
  gboolean owned = FALSE;

  reply = g_dbus_connection_call_sync (bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "NameHasOwner",
                                       g_variant_new ("(s)", APP_ID), G_VARIANT_TYPE ("(b)"),
                                       G_DBUS_CALL_FLAGS_NONE, CALL_TIMEOUT_MS, NULL, NULL);
  if (reply != NULL)
    g_variant_get (reply, "(b)", &owned);
  return owned;
}

char *
sight_serve_attach (GError **error)
{
  g_autoptr(GDBusConnection) bus = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) state = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *url = NULL;
  gboolean enabled = FALSE;

  /* Only a bus that is there to ask: an autolaunched one would outlive the
   * command. */
  if (!sight_headless_session_bus_exists ())
    return NULL;
  bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, NULL);
  if (bus == NULL || !app_is_running (bus))
    return NULL;

  /* The activation returns once the window serves (or failed to). */
  reply = g_dbus_connection_call_sync (bus, APP_ID, APP_PATH, "org.gtk.Actions", "Activate",
                                       g_variant_new ("(sava{sv})", "serve-mcp", NULL, NULL),
                                       NULL, G_DBUS_CALL_FLAGS_NONE, CALL_TIMEOUT_MS, NULL,
                                       &local_error);
  if (reply != NULL)
    {
      g_clear_pointer (&reply, g_variant_unref);
      reply = g_dbus_connection_call_sync (bus, APP_ID, APP_PATH, "org.gtk.Actions", "Describe",
                                           g_variant_new ("(s)", "serve-mcp"),
                                           G_VARIANT_TYPE ("((bgav))"), G_DBUS_CALL_FLAGS_NONE,
                                           CALL_TIMEOUT_MS, NULL, &local_error);
    }
  if (reply == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "The running Sightline app did not answer: %s", local_error->message);
      return NULL;
    }
  {
    g_autoptr(GVariantIter) states = NULL;

    g_variant_get (reply, "((bgav))", &enabled, NULL, &states);
    if (g_variant_iter_next (states, "v", &state) &&
        g_variant_is_of_type (state, G_VARIANT_TYPE_STRING))
      url = g_variant_dup_string (state, NULL);
  }
  if (url == NULL || *url == '\0')
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                           "The running Sightline app could not start its MCP server; its "
                           "window says why");
      return NULL;
    }
  return g_steal_pointer (&url);
}
