/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-shot-view"

#include "config.h"

#include "sight-shot-view.h"

#include <glib/gi18n.h>

typedef struct {
  graphene_rect_t box;     /* viewport CSS pixels */
  gboolean        interactive;
} Box;

struct _SightShotView
{
  GtkWidget parent_instance;

  /* owned */
  SightObservation *observation;
  GdkTexture       *texture;
  GArray           *boxes;          /* Box */
  char             *selected_ref;
  graphene_rect_t   selected_box;
  gboolean          has_selected_box;
  double            scale;          /* image pixels per CSS pixel */
  GtkWidget        *context_menu;   /* a popover for the node right-clicked, or NULL */
};

G_DEFINE_FINAL_TYPE (SightShotView, sight_shot_view, GTK_TYPE_WIDGET)

enum { NODE_CLICKED, N_SIGNALS };
static guint signals[N_SIGNALS];

static gboolean
box_of (JsonObject      *node,
        graphene_rect_t *out)
{
  JsonArray *box;

  if (!json_object_has_member (node, "box") ||
      !JSON_NODE_HOLDS_ARRAY (json_object_get_member (node, "box")))
    return FALSE;
  box = json_object_get_array_member (node, "box");
  if (json_array_get_length (box) < 4)
    return FALSE;
  graphene_rect_init (out,
                      json_array_get_double_element (box, 0),
                      json_array_get_double_element (box, 1),
                      json_array_get_double_element (box, 2),
                      json_array_get_double_element (box, 3));
  return out->size.width > 0 && out->size.height > 0;
}

static gboolean
is_interactive (JsonObject *node)
{
  static const char *roles[] = { "button", "checkbox", "combobox", "link", "listbox",
                                 "menuitem", "option", "radio", "searchbox", "slider",
                                 "spinbutton", "switch", "tab", "textbox", NULL };
  const char *role = json_object_get_string_member_with_default (node, "role", "");

  return g_strv_contains (roles, role) ||
         json_object_get_boolean_member_with_default (node, "clickable", FALSE) ||
         json_object_get_boolean_member_with_default (node, "focusable", FALSE);
}

static void
collect_boxes (SightShotView *self,
               JsonNode      *node)
{
  JsonObject *object;
  Box box;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return;
  object = json_node_get_object (node);
  /* The walk marks a node in view when any of its children is: nothing
   * under a node out of view is drawn (most of a page of 200,000). */
  if (!json_object_get_boolean_member_with_default (object, "inView", FALSE))
    return;
  if (box_of (object, &box.box))
    {
      box.interactive = is_interactive (object);
      g_array_append_val (self->boxes, box);
    }
  if (json_object_has_member (object, "children"))
    {
      JsonArray *children = json_object_get_array_member (object, "children");

      for (guint i = 0; children != NULL && i < json_array_get_length (children); i++)
        collect_boxes (self, json_array_get_element (children, i));
    }
}

/* Where the image sits in the widget: scaled to fit, centered. */
static gboolean
image_rect (SightShotView   *self,
            graphene_rect_t *rect,
            double          *factor)
{
  double width = gtk_widget_get_width (GTK_WIDGET (self));
  double height = gtk_widget_get_height (GTK_WIDGET (self));
  double tw, th, f;

  if (self->texture == NULL || width <= 0 || height <= 0)
    return FALSE;
  tw = gdk_texture_get_width (self->texture);
  th = gdk_texture_get_height (self->texture);
  f = MIN (width / tw, height / th);
  graphene_rect_init (rect, (width - tw * f) / 2, (height - th * f) / 2, tw * f, th * f);
  *factor = f;
  return TRUE;
}

gboolean
sight_shot_view_from_css (SightShotView *self,
                          double         css_x,
                          double         css_y,
                          double        *x,
                          double        *y)
{
  graphene_rect_t rect;
  double f;

  g_return_val_if_fail (SIGHT_IS_SHOT_VIEW (self), FALSE);

  if (!image_rect (self, &rect, &f))
    return FALSE;
  *x = rect.origin.x + css_x * self->scale * f;
  *y = rect.origin.y + css_y * self->scale * f;
  return TRUE;
}

gboolean
sight_shot_view_to_css (SightShotView *self,
                        double         x,
                        double         y,
                        double        *css_x,
                        double        *css_y)
{
  graphene_rect_t rect;
  double f;

  g_return_val_if_fail (SIGHT_IS_SHOT_VIEW (self), FALSE);

  if (!image_rect (self, &rect, &f) || self->scale <= 0 ||
      !graphene_rect_contains_point (&rect, &GRAPHENE_POINT_INIT (x, y)))
    return FALSE;
  *css_x = (x - rect.origin.x) / f / self->scale;
  *css_y = (y - rect.origin.y) / f / self->scale;
  return TRUE;
}

static void
css_to_widget_rect (SightShotView         *self,
                    const graphene_rect_t *css,
                    const graphene_rect_t *image,
                    double                 f,
                    graphene_rect_t       *out)
{
  double k = self->scale * f;

  graphene_rect_init (out, image->origin.x + css->origin.x * k,
                      image->origin.y + css->origin.y * k,
                      css->size.width * k, css->size.height * k);
  graphene_rect_intersection (out, image, out);
}

static void
sight_shot_view_snapshot (GtkWidget   *widget,
                          GtkSnapshot *snapshot)
{
  SightShotView *self = SIGHT_SHOT_VIEW (widget);
  GdkRGBA accent, faint, fill;
  graphene_rect_t image;
  double f;

  if (!image_rect (self, &image, &f))
    return;

  gtk_snapshot_append_texture (snapshot, self->texture, &image);

  /* The accent of the theme (blue in Adwaita) reads on light and dark pages. */
  gdk_rgba_parse (&accent, "#3584e4");
  faint = accent;
  faint.alpha = 0.45;
  for (guint i = 0; i < self->boxes->len; i++)
    {
      Box *box = &g_array_index (self->boxes, Box, i);
      graphene_rect_t r;
      GskRoundedRect rounded;

      if (!box->interactive)
        continue;
      css_to_widget_rect (self, &box->box, &image, f, &r);
      if (r.size.width <= 0 || r.size.height <= 0)
        continue;
      gsk_rounded_rect_init_from_rect (&rounded, &r, 0);
      gtk_snapshot_append_border (snapshot, &rounded,
                                  (float[4]) { 1, 1, 1, 1 },
                                  (GdkRGBA[4]) { faint, faint, faint, faint });
    }

  if (self->has_selected_box)
    {
      graphene_rect_t r;
      GskRoundedRect rounded;

      css_to_widget_rect (self, &self->selected_box, &image, f, &r);
      if (r.size.width > 0 && r.size.height > 0)
        {
          fill = accent;
          fill.alpha = 0.22;
          gtk_snapshot_append_color (snapshot, &fill, &r);
          gsk_rounded_rect_init_from_rect (&rounded, &r, 2);
          gtk_snapshot_append_border (snapshot, &rounded,
                                      (float[4]) { 2, 2, 2, 2 },
                                      (GdkRGBA[4]) { accent, accent, accent, accent });
        }
    }
}

static void
sight_shot_view_measure (GtkWidget      *widget,
                         GtkOrientation  orientation,
                         int             for_size,
                         int            *minimum,
                         int            *natural,
                         int            *minimum_baseline,
                         int            *natural_baseline)
{
  SightShotView *self = SIGHT_SHOT_VIEW (widget);

  *minimum = 64;
  *natural = 320;
  /* Half the screenshot's size, but never under the minimum (a small
   * stored screenshot would make GTK warn). */
  if (self->texture != NULL)
    *natural = MAX (*minimum, orientation == GTK_ORIENTATION_HORIZONTAL
                              ? gdk_texture_get_width (self->texture) / 2
                              : gdk_texture_get_height (self->texture) / 2);
}

void
sight_shot_view_click (SightShotView *self,
                       double         x,
                       double         y)
{
  const char *ref = NULL;
  double css_x, css_y;

  g_return_if_fail (SIGHT_IS_SHOT_VIEW (self));

  if (self->observation != NULL && sight_shot_view_to_css (self, x, y, &css_x, &css_y))
    ref = sight_observation_hit_test (self->observation, css_x, css_y);
  g_signal_emit (self, signals[NODE_CLICKED], 0, ref);
}

static void
pressed_cb (GtkGestureClick *gesture,
            int              n_press,
            double           x,
            double           y,
            SightShotView   *self)
{
  sight_shot_view_click (self, x, y);
}

/* A right click selects the node there (::node-clicked) and opens the
 * context menu about it. */
static void
secondary_pressed_cb (GtkGestureClick *gesture,
                      int              n_press,
                      double           x,
                      double           y,
                      SightShotView   *self)
{
  sight_shot_view_click (self, x, y);
  if (self->context_menu == NULL || self->selected_ref == NULL)
    return;
  gtk_popover_set_pointing_to (GTK_POPOVER (self->context_menu),
                               &(GdkRectangle) { (int) x, (int) y, 1, 1 });
  gtk_popover_popup (GTK_POPOVER (self->context_menu));
}

void
sight_shot_view_set_context_menu (SightShotView *self,
                                  GMenuModel    *menu)
{
  g_return_if_fail (SIGHT_IS_SHOT_VIEW (self));

  g_clear_pointer (&self->context_menu, gtk_widget_unparent);
  if (menu == NULL)
    return;
  self->context_menu = gtk_popover_menu_new_from_model (menu);
  gtk_popover_set_has_arrow (GTK_POPOVER (self->context_menu), FALSE);
  gtk_widget_set_halign (self->context_menu, GTK_ALIGN_START);
  gtk_widget_set_parent (self->context_menu, GTK_WIDGET (self));
}

static void
sight_shot_view_size_allocate (GtkWidget *widget,
                               int        width,
                               int        height,
                               int        baseline)
{
  SightShotView *self = SIGHT_SHOT_VIEW (widget);

  if (self->context_menu != NULL)
    gtk_popover_present (GTK_POPOVER (self->context_menu));
}

static void
sight_shot_view_dispose (GObject *object)
{
  SightShotView *self = SIGHT_SHOT_VIEW (object);

  g_clear_pointer (&self->context_menu, gtk_widget_unparent);
  g_clear_object (&self->observation);
  g_clear_object (&self->texture);
  G_OBJECT_CLASS (sight_shot_view_parent_class)->dispose (object);
}

static void
sight_shot_view_finalize (GObject *object)
{
  SightShotView *self = SIGHT_SHOT_VIEW (object);

  g_clear_pointer (&self->boxes, g_array_unref);
  g_clear_pointer (&self->selected_ref, g_free);
  G_OBJECT_CLASS (sight_shot_view_parent_class)->finalize (object);
}

static void
sight_shot_view_class_init (SightShotViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sight_shot_view_dispose;
  object_class->finalize = sight_shot_view_finalize;
  widget_class->snapshot = sight_shot_view_snapshot;
  widget_class->measure = sight_shot_view_measure;
  widget_class->size_allocate = sight_shot_view_size_allocate;

  /**
   * SightShotView::node-clicked:
   * @ref: (nullable): the ref under the click
   */
  signals[NODE_CLICKED] = g_signal_new ("node-clicked", G_TYPE_FROM_CLASS (klass),
                                        G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                        G_TYPE_NONE, 1, G_TYPE_STRING);

  gtk_widget_class_set_css_name (widget_class, "shotview");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
sight_shot_view_init (SightShotView *self)
{
  GtkGesture *click = gtk_gesture_click_new ();

  self->boxes = g_array_new (FALSE, FALSE, sizeof (Box));
  g_signal_connect (click, "pressed", G_CALLBACK (pressed_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));
  click = gtk_gesture_click_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (click), GDK_BUTTON_SECONDARY);
  g_signal_connect (click, "pressed", G_CALLBACK (secondary_pressed_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));
  gtk_widget_set_cursor_from_name (GTK_WIDGET (self), "crosshair");
  gtk_accessible_update_property (GTK_ACCESSIBLE (self),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Screenshot the model saw, with the boxes of its nodes"),
                                  -1);
}

GtkWidget *
sight_shot_view_new (void)
{
  return g_object_new (SIGHT_TYPE_SHOT_VIEW, NULL);
}

static void
update_selected_box (SightShotView *self)
{
  JsonObject *node = NULL;

  self->has_selected_box = FALSE;
  if (self->observation != NULL && self->selected_ref != NULL)
    node = sight_observation_lookup (self->observation, self->selected_ref);
  if (node != NULL)
    self->has_selected_box = box_of (node, &self->selected_box);
}

void
sight_shot_view_set_observation (SightShotView    *self,
                                 SightObservation *observation)
{
  const SightScreenshot *shot = NULL;

  g_return_if_fail (SIGHT_IS_SHOT_VIEW (self));

  g_set_object (&self->observation, observation);
  g_clear_object (&self->texture);
  g_array_set_size (self->boxes, 0);
  self->scale = 1.0;
  if (observation != NULL)
    shot = sight_observation_get_screenshot (observation);
  if (shot != NULL && shot->bytes != NULL)
    {
      g_autoptr(GError) error = NULL;

      self->texture = gdk_texture_new_from_bytes (shot->bytes, &error);
      if (self->texture == NULL)
        g_warning ("Cannot decode the observation's screenshot: %s", error->message);
      self->scale = shot->scale > 0 ? shot->scale : 1.0;
    }
  if (observation != NULL)
    collect_boxes (self, sight_observation_get_tree (observation));
  update_selected_box (self);
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

void
sight_shot_view_set_selected_ref (SightShotView *self,
                                  const char    *ref)
{
  g_return_if_fail (SIGHT_IS_SHOT_VIEW (self));

  if (g_strcmp0 (ref, self->selected_ref) == 0)
    return;
  g_free (self->selected_ref);
  self->selected_ref = g_strdup (ref);
  update_selected_box (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

const char *
sight_shot_view_get_selected_ref (SightShotView *self)
{
  g_return_val_if_fail (SIGHT_IS_SHOT_VIEW (self), NULL);
  return self->selected_ref;
}
