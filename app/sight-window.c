/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-window"

#include "config.h"

#include "sight-window.h"

#include <glib/gi18n.h>
#include <webkit/webkit.h>

struct _SightWindow
{
  AdwApplicationWindow parent_instance;

  /* template widgets */
  GtkEntry      *address_entry;
  WebKitWebView *web_view;
};

G_DEFINE_FINAL_TYPE (SightWindow, sight_window, ADW_TYPE_APPLICATION_WINDOW)

static void
address_activate_cb (GtkEntry    *entry,
                     SightWindow *self)
{
  sight_window_open_uri (self, gtk_editable_get_text (GTK_EDITABLE (entry)));
}

static void
load_changed_cb (WebKitWebView   *web_view,
                 WebKitLoadEvent  event,
                 SightWindow     *self)
{
  const char *uri = webkit_web_view_get_uri (web_view);

  if (uri != NULL && !gtk_widget_has_focus (GTK_WIDGET (self->address_entry)))
    gtk_editable_set_text (GTK_EDITABLE (self->address_entry), uri);
}

static void
sight_window_class_init (SightWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/dev/sightline/Sightline/sight-window.ui");
  gtk_widget_class_bind_template_child (widget_class, SightWindow, address_entry);
  gtk_widget_class_bind_template_child (widget_class, SightWindow, web_view);
  gtk_widget_class_bind_template_callback (widget_class, address_activate_cb);
  gtk_widget_class_bind_template_callback (widget_class, load_changed_cb);
}

static void
sight_window_init (SightWindow *self)
{
  g_type_ensure (WEBKIT_TYPE_WEB_VIEW);
  gtk_widget_init_template (GTK_WIDGET (self));
}

SightWindow *
sight_window_new (SightApplication *application)
{
  return g_object_new (SIGHT_TYPE_WINDOW, "application", application, NULL);
}

void
sight_window_open_uri (SightWindow *self,
                       const char  *uri)
{
  g_return_if_fail (SIGHT_IS_WINDOW (self));

  webkit_web_view_load_uri (self->web_view, uri);
}
