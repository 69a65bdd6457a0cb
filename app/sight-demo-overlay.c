/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-demo-overlay"

#include "config.h"

#include "sight-demo-overlay.h"

#include <glib/gi18n.h>

#include "sight-direct-step.h"
#include "sight-observation.h"
#include "sight-step-options.h"

#define FIND_TIMEOUT_MS 5000

struct _SightDemoOverlay
{
  AdwBin        parent_instance;

  GtkWidget    *caption_box;
  GtkLabel     *caption_label;

  SightWebPage *page;
  GCancellable *find_cancellable;
  char         *caption;
};

G_DEFINE_FINAL_TYPE (SightDemoOverlay, sight_demo_overlay, ADW_TYPE_BIN)

enum { TARGET_FOUND, N_SIGNALS };
static guint signals[N_SIGNALS];

static const char *
target_name (const SightDirectStep *step)
{
  if (!step->has_target)
    return NULL;
  if (step->target.name != NULL && *step->target.name != '\0')
    return step->target.name;
  return step->target.phrase;
}

/* What a direct step does, in words for an audience. A value typed into a
 * field is never shown: it may be a secret. */
static char *
direct_caption (const SightDirectStep *step)
{
  const char *name = target_name (step);

  switch (step->verb)
    {
    case SIGHT_DIRECT_CLICK:
      if (name != NULL)
        /* Translators: demo mode's caption; %s is what is clicked */
        return g_strdup_printf (_("Clicking “%s”"), name);
      break;
    case SIGHT_DIRECT_DOUBLE_CLICK:
      if (name != NULL)
        return g_strdup_printf (_("Double-clicking “%s”"), name);
      break;
    case SIGHT_DIRECT_HOVER:
      if (name != NULL)
        return g_strdup_printf (_("Pointing at “%s”"), name);
      break;
    case SIGHT_DIRECT_FILL:
      if (name != NULL)
        return g_strdup_printf (_("Typing into “%s”"), name);
      return g_strdup (_("Typing"));
    case SIGHT_DIRECT_PRESS:
      if (step->value != NULL)
        return g_strdup_printf (_("Pressing %s"), step->value);
      break;
    case SIGHT_DIRECT_SELECT:
      if (step->value != NULL)
        return g_strdup_printf (_("Choosing “%s”"), step->value);
      break;
    case SIGHT_DIRECT_CHECK:
      if (name != NULL)
        return g_strdup_printf (_("Ticking “%s”"), name);
      break;
    case SIGHT_DIRECT_UNCHECK:
      if (name != NULL)
        return g_strdup_printf (_("Unticking “%s”"), name);
      break;
    case SIGHT_DIRECT_UPLOAD:
      if (name != NULL)
        return g_strdup_printf (_("Uploading a file to “%s”"), name);
      break;
    case SIGHT_DIRECT_GOTO:
      if (step->value != NULL)
        return g_strdup_printf (_("Opening %s"), step->value);
      break;
    case SIGHT_DIRECT_BACK:
      return g_strdup (_("Going back"));
    case SIGHT_DIRECT_FORWARD:
      return g_strdup (_("Going forward"));
    case SIGHT_DIRECT_RELOAD:
      return g_strdup (_("Reloading the page"));
    case SIGHT_DIRECT_SCROLL:
      return g_strdup (_("Scrolling"));
    case SIGHT_DIRECT_WAIT_FOR_TEXT:
      if (step->value != NULL)
        return g_strdup_printf (_("Waiting for “%s”"), step->value);
      break;
    case SIGHT_DIRECT_WAIT_TIME:
      return g_strdup (_("Waiting"));
    case SIGHT_DIRECT_EXPECT:
    default:
      break;
    }
  return NULL;
}

char *
sight_demo_caption (const char *kind,
                    const char *instruction)
{
  SightStepKind agent_kind;

  g_return_val_if_fail (kind != NULL && instruction != NULL, NULL);

  if (g_str_equal (kind, SIGHT_STEP_DIRECT_NAME))
    {
      g_autoptr(SightDirectStep) step = sight_direct_step_parse (instruction, NULL);
      char *caption = step != NULL ? direct_caption (step) : NULL;

      if (caption != NULL)
        return caption;
      if (step != NULL && step->verb == SIGHT_DIRECT_EXPECT)
        return g_strdup_printf (_("Checking: %s"), instruction);
      return g_strdup (instruction);
    }
  if (!sight_step_kind_from_string (kind, &agent_kind))
    return g_strdup (instruction);
  switch (agent_kind)
    {
    case SIGHT_STEP_ASSERT:
      /* Translators: demo mode's caption of an assertion */
      return g_strdup_printf (_("Checking: %s"), instruction);
    case SIGHT_STEP_WAIT_FOR:
      return g_strdup_printf (_("Waiting until: %s"), instruction);
    case SIGHT_STEP_EXTRACT:
      return g_strdup_printf (_("Reading: %s"), instruction);
    case SIGHT_STEP_ACT:
    default:
      return g_strdup (instruction);
    }
}

/* Finding the target -------------------------------------------------------- */

typedef struct {
  SightDemoOverlay *self;
  SightDirectStep  *step;
} FindData;

static void
find_data_free (FindData *data)
{
  g_object_unref (data->self);
  sight_direct_step_free (data->step);
  g_free (data);
}

static void
capture_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  FindData *data = user_data;
  g_autoptr(SightObservation) observation = NULL;
  g_autoptr(SightNodeList) list = NULL;
  g_autoptr(GError) error = NULL;
  const SightNodeView *nodes;
  guint n_nodes = 0;
  guint index = 0;

  observation = sight_observation_capture_finish (result, &error);
  if (observation == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_debug ("Could not observe the page for the demo: %s", error->message);
      find_data_free (data);
      return;
    }
  list = sight_node_list_new (observation);
  nodes = sight_node_list_get (list, &n_nodes);
  if (sight_direct_step_resolve (data->step, nodes, n_nodes, &index, &error))
    g_signal_emit (data->self, signals[TARGET_FOUND], 0, nodes[index].ref);
  else
    g_debug ("No target to outline: %s", error->message);
  find_data_free (data);
}

static void
find_target (SightDemoOverlay *self,
             const char       *instruction)
{
  g_autoptr(SightDirectStep) step = sight_direct_step_parse (instruction, NULL);
  FindData *data;

  if (step == NULL || !step->has_target || self->page == NULL)
    return;
  /* Which node "the last one" or an expectation names matters less than
   * that the outline shows where the action happens. */
  g_cancellable_cancel (self->find_cancellable);
  g_clear_object (&self->find_cancellable);
  self->find_cancellable = g_cancellable_new ();
  data = g_new0 (FindData, 1);
  data->self = g_object_ref (self);
  data->step = g_steal_pointer (&step);
  sight_observation_capture_async (self->page, SIGHT_OBSERVE_PARSE_TREE, FIND_TIMEOUT_MS,
                                   self->find_cancellable, capture_cb, data);
}

/* The widget ------------------------------------------------------------------- */

static void
sight_demo_overlay_dispose (GObject *object)
{
  SightDemoOverlay *self = SIGHT_DEMO_OVERLAY (object);

  if (self->find_cancellable != NULL)
    g_cancellable_cancel (self->find_cancellable);
  g_clear_object (&self->find_cancellable);
  g_clear_object (&self->page);
  G_OBJECT_CLASS (sight_demo_overlay_parent_class)->dispose (object);
}

static void
sight_demo_overlay_finalize (GObject *object)
{
  SightDemoOverlay *self = SIGHT_DEMO_OVERLAY (object);

  g_free (self->caption);
  G_OBJECT_CLASS (sight_demo_overlay_parent_class)->finalize (object);
}

static void
sight_demo_overlay_class_init (SightDemoOverlayClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sight_demo_overlay_dispose;
  object_class->finalize = sight_demo_overlay_finalize;

  /**
   * SightDemoOverlay::target-found:
   * @ref: the ref of the node the step acts on, in the live page
   */
  signals[TARGET_FOUND] = g_signal_new ("target-found", G_TYPE_FROM_CLASS (klass),
                                        G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                        G_TYPE_NONE, 1, G_TYPE_STRING);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/dev/sightline/Sightline/sight-demo-overlay.ui");
  gtk_widget_class_bind_template_child (widget_class, SightDemoOverlay, caption_box);
  gtk_widget_class_bind_template_child (widget_class, SightDemoOverlay, caption_label);
}

static void
sight_demo_overlay_init (SightDemoOverlay *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

GtkWidget *
sight_demo_overlay_new (void)
{
  return g_object_new (SIGHT_TYPE_DEMO_OVERLAY, NULL);
}

void
sight_demo_overlay_set_page (SightDemoOverlay *self,
                             SightWebPage     *page)
{
  g_return_if_fail (SIGHT_IS_DEMO_OVERLAY (self));

  g_set_object (&self->page, page);
}

void
sight_demo_overlay_show_step (SightDemoOverlay *self,
                              const char       *kind,
                              const char       *instruction)
{
  g_return_if_fail (SIGHT_IS_DEMO_OVERLAY (self));
  g_return_if_fail (kind != NULL && instruction != NULL);

  g_free (self->caption);
  self->caption = sight_demo_caption (kind, instruction);
  gtk_label_set_label (self->caption_label, self->caption);
  gtk_widget_set_visible (self->caption_box, TRUE);
  if (g_str_equal (kind, SIGHT_STEP_DIRECT_NAME))
    find_target (self, instruction);
}

void
sight_demo_overlay_clear (SightDemoOverlay *self)
{
  g_return_if_fail (SIGHT_IS_DEMO_OVERLAY (self));

  if (self->find_cancellable != NULL)
    g_cancellable_cancel (self->find_cancellable);
  g_clear_pointer (&self->caption, g_free);
  gtk_label_set_label (self->caption_label, "");
  gtk_widget_set_visible (self->caption_box, FALSE);
}

const char *
sight_demo_overlay_get_caption (SightDemoOverlay *self)
{
  g_return_val_if_fail (SIGHT_IS_DEMO_OVERLAY (self), NULL);

  return self->caption;
}
