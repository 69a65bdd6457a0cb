/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-composer"

#include "config.h"

#include "sight-composer.h"

#include <glib/gi18n.h>

#include "sight-agent.h"
#include "sight-error.h"
#include "sight-json.h"
#include "sight-model-config.h"
#include "sight-project.h"
#include "sight-step-executor.h"
#include "sight-step-request.h"
#include "sight-step-result.h"


#define DIRECT_STEP_TIMEOUT_MS 15000
#define TICK_MS 100

/* The kind menu's entries, in its order. */
#define kinds (sight_step_kind_get_names ())

struct _SightComposer
{
  AdwBin parent_instance;

  /* template widgets */
  GtkDropDown    *kind_dropdown;
  GtkEntry       *instruction_entry;
  GtkTextView    *params_view;
  GtkWidget      *schema_expander;
  GtkTextView    *schema_view;
  GtkDropDown    *vision_dropdown;
  GtkSpinButton  *timeout_spin;
  GtkSpinButton  *max_steps_spin;
  GtkSpinButton  *max_calls_spin;
  GtkEntry       *agent_entry;
  GtkWidget      *vision_row;
  GtkWidget      *max_steps_row;
  GtkWidget      *max_calls_row;
  GtkRevealer    *no_model_revealer;
  GtkLabel       *no_model_label;
  GtkWidget      *model_preferences_button;
  GtkWidget      *result_box;
  GtkLabel       *verdict_label;
  GtkLabel       *code_label;
  GtkLabel       *summary_label;
  GtkLevelBar    *calls_bar;
  GtkLabel       *calls_label;
  GtkLevelBar    *actions_bar;
  GtkLabel       *actions_label;
  GtkLevelBar    *time_bar;
  GtkLabel       *time_label;
  GtkLabel       *tokens_label;
  GtkLabel       *cost_label;
  GtkLabel       *totals_label;
  GtkListBox     *timeline;
  GtkStack       *timeline_stack;

  /* owned */
  SightProject   *project;
  SightModelProvider *provider;     /* the app's preferences, or NULL */
  char           *provider_hint;    /* why there is none, or NULL */
  /* the preferences' defaults for what a step leaves unsaid (0, NULL: none) */
  guint           default_max_steps;
  guint           default_max_calls;
  char           *default_vision;
  SightWebPage   *page;
  SightAgent     *agent;
  SightAgent     *followed;         /* a live session's, whose steps show here */
  gboolean        following;        /* one of its steps is running */
  char           *followed_kind;    /* that step's, for its row when stopped */
  char           *followed_instruction;
  gboolean        stopping_followed; /* Stop was pressed on it */
  GCancellable   *cancellable;      /* the window's */
  GCancellable   *run_cancellable;
  char           *verdict;
  gint64          started_us;
  gint64          finished_us;
  gint64          timeout_ms;
  guint           max_calls;
  guint           max_actions;
  guint           model_calls;
  guint           actions;
  guint           tick_source;
  guint           n_timeline;
  /* run totals */
  guint           total_steps;
  guint           total_calls;
  SightUsage      total_usage;     /* every step's, summed saturating */
  gboolean        running;
  /* Demo mode: a pause before each step starts (the caption and the
   * highlighted target show meanwhile). */
  guint           start_delay_ms;
  guint           delay_source;
  char           *delayed_kind;
  char           *delayed_instruction;
  JsonObject     *delayed_options;
};

G_DEFINE_FINAL_TYPE (SightComposer, sight_composer, ADW_TYPE_BIN)

enum { STEP_STARTED, STEP_FINISHED, ACTION_STARTING, N_SIGNALS };
static guint signals[N_SIGNALS];

enum { PROP_0, PROP_RUNNING, N_PROPS };
static GParamSpec *properties[N_PROPS];

const char *
sight_composer_get_kind (SightComposer *self)
{
  guint selected;

  g_return_val_if_fail (SIGHT_IS_COMPOSER (self), NULL);

  selected = gtk_drop_down_get_selected (self->kind_dropdown);
  return selected < g_strv_length ((GStrv) kinds) ? kinds[selected] : SIGHT_STEP_DIRECT_NAME;
}

/* Meters ----------------------------------------------------------------- */

static void
set_meter (GtkLevelBar *bar,
           GtkLabel    *label,
           double       used,
           double       limit,
           const char  *text)
{
  gtk_level_bar_set_max_value (bar, limit > 0 ? limit : 1);
  gtk_level_bar_set_value (bar, limit > 0 ? MIN (used, limit) : 0);
  gtk_label_set_text (label, text);
}

static gint64
elapsed_ms_of (SightComposer *self)
{
  if (self->started_us <= 0)
    return 0;
  return ((self->running || self->following ? g_get_monotonic_time () : self->finished_us) - self->started_us) / 1000;
}

static void
update_meters (SightComposer *self)
{
  gint64 elapsed_ms = elapsed_ms_of (self);
  g_autofree char *calls = NULL;
  g_autofree char *actions = NULL;
  g_autofree char *time = NULL;

  /* Translators: a meter: used / limit */
  calls = self->max_calls > 0 ? g_strdup_printf (_("%u / %u"), self->model_calls, self->max_calls)
                              : g_strdup_printf ("%u", self->model_calls);
  actions = self->max_actions > 0 ? g_strdup_printf (_("%u / %u"), self->actions, self->max_actions)
                                  : g_strdup_printf ("%u", self->actions);
  /* Translators: a time meter in seconds: used / timeout */
  time = g_strdup_printf (_("%.1f s / %.0f s"), elapsed_ms / 1000.0, self->timeout_ms / 1000.0);
  set_meter (self->calls_bar, self->calls_label, self->model_calls, self->max_calls, calls);
  set_meter (self->actions_bar, self->actions_label, self->actions, self->max_actions, actions);
  set_meter (self->time_bar, self->time_label, elapsed_ms, self->timeout_ms, time);
}

static gboolean
tick_cb (gpointer user_data)
{
  update_meters (SIGHT_COMPOSER (user_data));
  return G_SOURCE_CONTINUE;
}

static void
budget_changed_cb (SightAgent    *agent,
                   guint          model_calls,
                   guint          actions,
                   gint64         remaining_ms,
                   SightComposer *self)
{
  self->model_calls = model_calls;
  self->actions = actions;
  update_meters (self);
}

static void
model_call_started_cb (SightAgent    *agent,
                       guint          n,
                       SightComposer *self)
{
  self->model_calls = MAX (self->model_calls, n);
  update_meters (self);
}

static void
update_tick (SightComposer *self)
{
  gboolean ticking = self->running || self->following;

  if (ticking && self->tick_source == 0)
    self->tick_source = g_timeout_add (TICK_MS, tick_cb, self);
  else if (!ticking)
    g_clear_handle_id (&self->tick_source, g_source_remove);
}

static void
action_starting_cb (SightAgent    *agent,
                    const char    *ref,
                    SightComposer *self)
{
  g_signal_emit (self, signals[ACTION_STARTING], 0, ref);
}

/* Model notice ----------------------------------------------------------- */

static gboolean
model_configured (SightComposer *self,
                  const char    *kind,
                  const char    *agent,
                  char         **hint)
{
  g_autoptr(SightModelProvider) provider = NULL;
  g_autoptr(GError) error = NULL;
  const SightAgentConfig *config;
  SightStepKind step_kind;

  if (agent == NULL)
    agent = gtk_editable_get_text (GTK_EDITABLE (self->agent_entry));

  config = sight_project_resolve_agent (self->project, *agent ? agent : NULL, &error);
  /* A custom executor carries out act and assert with no model. */
  if (config != NULL && sight_step_kind_from_string (kind, &step_kind) &&
      sight_agent_config_dispatches (config, step_kind))
    return TRUE;
  /* The preferences' model serves an agent that names none. */
  if (config != NULL && config->provider == NULL && self->provider != NULL)
    return TRUE;
  if (config != NULL && config->provider == NULL && self->provider_hint != NULL)
    {
      if (hint != NULL)
        *hint = g_strdup (self->provider_hint);
      return FALSE;
    }
  if (config != NULL)
    provider = sight_model_provider_new_for_agent_config (config, &error);
  if (provider != NULL)
    return TRUE;
  if (hint != NULL)
    *hint = g_strdup (error != NULL ? error->message : "");
  return FALSE;
}

static void
update_kind (SightComposer *self)
{
  const char *kind = sight_composer_get_kind (self);
  gboolean direct = g_str_equal (kind, "do");
  g_autofree char *hint = NULL;
  gboolean no_model = !direct && !model_configured (self, kind, NULL, &hint);

  gtk_widget_set_visible (self->schema_expander, g_str_equal (kind, "extract"));
  gtk_widget_set_visible (self->vision_row, !direct && !g_str_equal (kind, "act"));
  gtk_widget_set_visible (self->max_steps_row, g_str_equal (kind, "act"));
  gtk_widget_set_visible (self->max_calls_row,
                          g_str_equal (kind, "act") || g_str_equal (kind, "waitFor"));
  gtk_entry_set_placeholder_text (self->instruction_entry,
                                  direct ? _("click the “Sign in” button")
                                  : g_str_equal (kind, "act") ? _("Sign in as the member")
                                  : g_str_equal (kind, "assert") ? _("the dashboard shows a trial badge")
                                  : g_str_equal (kind, "waitFor") ? _("the upload has finished")
                                  : _("the workspace name and plan"));
  if (no_model)
    {
      g_autofree char *text = g_strdup_printf (
        _("Steps that need a model fail until one is set: choose one in Preferences "
          "(Ctrl+,), set SIGHTLINE_MODEL (for example “openai:gpt-4.1-mini”) and its API key, "
          "or add an agent to sightline.json. %s"),
        hint != NULL ? hint : "");

      gtk_label_set_text (self->no_model_label, text);
    }
  gtk_revealer_set_reveal_child (self->no_model_revealer, no_model);
}

static void
kind_changed_cb (GtkDropDown   *dropdown,
                 GParamSpec    *pspec,
                 SightComposer *self)
{
  update_kind (self);
}

/* Running ---------------------------------------------------------------- */

static void
set_running (SightComposer *self,
             gboolean       running)
{
  if (self->running != running)
    {
      self->running = running;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUNNING]);
    }
  if (!running)
    self->finished_us = g_get_monotonic_time ();
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "composer.run", !running);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "composer.stop", running);
  update_tick (self);
}

static void
add_timeline_row (SightComposer *self,
                  const char    *kind,
                  const char    *instruction,
                  const char    *verdict,
                  const char    *detail)
{
  GtkWidget *row = adw_action_row_new ();
  GtkWidget *icon;
  g_autofree char *title = g_markup_printf_escaped ("%s  %s", kind, instruction);
  g_autofree char *subtitle = g_markup_escape_text (detail != NULL ? detail : "", -1);

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (row), 2);
  icon = gtk_image_new_from_icon_name (g_str_equal (verdict, "recorded") ? "media-record-symbolic"
                                       : g_str_equal (verdict, "pass") ? "emblem-ok-symbolic"
                                       : g_str_equal (verdict, "blocked")
                                       ? "action-unavailable-symbolic"
                                       : "dialog-error-symbolic");
  gtk_widget_add_css_class (icon, g_str_equal (verdict, "recorded") ? "accent"
                            : g_str_equal (verdict, "pass") ? "success"
                            : g_str_equal (verdict, "blocked") ? "warning" : "error");
  gtk_accessible_update_property (GTK_ACCESSIBLE (icon), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  verdict, -1);
  adw_action_row_add_prefix (ADW_ACTION_ROW (row), icon);
  gtk_list_box_prepend (self->timeline, row);
  self->n_timeline++;
  gtk_stack_set_visible_child_name (self->timeline_stack, "list");
}

static void
show_result (SightComposer *self,
             const char    *kind,
             const char    *instruction,
             const char    *verdict,
             const char    *code,
             const char    *text)
{
  const char *classes[] = { "success", "error", "warning" };

  g_free (self->verdict);
  self->verdict = g_strdup (verdict);
  for (guint i = 0; i < G_N_ELEMENTS (classes); i++)
    gtk_widget_remove_css_class (GTK_WIDGET (self->verdict_label), classes[i]);
  gtk_widget_add_css_class (GTK_WIDGET (self->verdict_label),
                            g_str_equal (verdict, "pass") ? "success"
                            : g_str_equal (verdict, "blocked") ? "warning" : "error");
  gtk_label_set_text (self->verdict_label,
                      g_str_equal (verdict, "pass") ? _("Passed")
                      : g_str_equal (verdict, "blocked") ? _("Blocked") : _("Failed"));
  gtk_label_set_text (self->code_label, code != NULL ? code : "");
  gtk_widget_set_visible (GTK_WIDGET (self->code_label), code != NULL);
  gtk_label_set_text (self->summary_label, text != NULL ? text : "");
  /* Blocked for want of a model: the way to the setting that is missing. */
  gtk_widget_set_visible (self->model_preferences_button,
                          g_strcmp0 (code, "MODEL_UNAVAILABLE") == 0);
  gtk_widget_set_visible (self->result_box, TRUE);
  add_timeline_row (self, kind, instruction, verdict, code != NULL && text != NULL
                    ? text : text);
}

static void
update_totals (SightComposer *self)
{
  g_autofree char *totals = NULL;

  totals = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "Run: %u step, %u model calls",
                                         "Run: %u steps, %u model calls", self->total_steps),
                            self->total_steps, self->total_calls);
  gtk_label_set_text (self->totals_label, totals);
}

/* The cost meter: what the provider reported, else Sightline's estimate
 * from its price table, marked as one. */
static char *
cost_text (const SightUsage *usage)
{
  g_autofree char *reported = g_strdup_printf ("$%.4f", usage->cost_micro_usd / 1e6);
  g_autofree char *estimated = g_strdup_printf ("$%.4f", usage->estimated_cost_micro_usd / 1e6);

  if (usage->has_cost && usage->has_estimated_cost)
    /* Translators: a step's cost: what the provider reported, and Sightline's
     * estimate for the calls it did not price */
    return g_strdup_printf (_("%s reported, ~%s estimated"), reported, estimated);
  if (usage->has_cost)
    return g_steal_pointer (&reported);
  if (usage->has_estimated_cost)
    /* Translators: a cost Sightline estimated from its price table */
    return g_strdup_printf (_("~%s (estimated)"), estimated);
  return g_strdup (_("unknown"));
}

static JsonNode *
outcome_json (const char *kind,
              const char *instruction,
              const char *verdict,
              const char *code,
              const char *member,
              const char *text)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "kind");
  json_builder_add_string_value (builder, kind);
  json_builder_set_member_name (builder, "instruction");
  json_builder_add_string_value (builder, instruction);
  json_builder_set_member_name (builder, "verdict");
  json_builder_add_string_value (builder, verdict);
  if (code != NULL)
    {
      json_builder_set_member_name (builder, "code");
      json_builder_add_string_value (builder, code);
    }
  if (text != NULL)
    {
      json_builder_set_member_name (builder, member);
      json_builder_add_string_value (builder, text);
    }
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

static void
emit_finished (SightComposer *self,
               JsonNode      *json)
{
  self->total_steps++;
  update_totals (self);
  update_meters (self);
  g_signal_emit (self, signals[STEP_FINISHED], 0, json);
}

/* Shows a finished agent step: verdict, value or explanation, the timeline
 * row, its tokens and cost, and the run totals. */
static void
show_step_result (SightComposer   *self,
                  SightStepResult *step)
{
  g_autofree char *tokens = NULL;
  g_autofree char *in_tokens = NULL;
  g_autofree char *out_tokens = NULL;
  const char *code = NULL;
  const char *text;

  self->model_calls = step->model_calls;
  self->actions = step->actions;
  if (step->error != NULL && step->error->domain == SIGHT_ERROR)
    code = sight_error_code_to_string (step->error->code);
  text = step->error != NULL ? step->error->message : step->summary;
  if (step->value != NULL && step->error == NULL)
    {
      g_autofree char *value = sight_step_result_dup_value_text (step, TRUE,
                                                                 SIGHT_STEP_RESULT_MAX_VALUE_BYTES);

      show_result (self, sight_step_kind_to_string (step->kind), step->instruction,
                   sight_step_verdict_to_string (step->verdict), code, value);
    }
  else
    show_result (self, sight_step_kind_to_string (step->kind), step->instruction,
                 sight_step_verdict_to_string (step->verdict), code, text);

  self->total_calls = (guint) MIN (sight_usage_saturating_add (self->total_calls,
                                                                step->model_calls), G_MAXUINT);
  sight_usage_add (&self->total_usage, &step->usage);
  in_tokens = g_strdup_printf ("%" G_GUINT64_FORMAT, step->usage.input_tokens);
  out_tokens = g_strdup_printf ("%" G_GUINT64_FORMAT, step->usage.output_tokens);
  /* Translators: tokens of one step: in / out */
  tokens = g_strdup_printf (_("%s in / %s out"), in_tokens, out_tokens);
  gtk_label_set_text (self->tokens_label, tokens);
  {
    g_autofree char *cost = cost_text (&step->usage);

    gtk_label_set_text (self->cost_label, cost);
  }
  self->total_steps++;
  update_totals (self);
  update_meters (self);
}

/* A finished direct step: shown and reported in the shape the step list
 * reads (its text masked when it typed a secret literally). */
static JsonNode *
show_direct_result (SightComposer   *self,
                    SightStepResult *step)
{
  JsonNode *json;
  const char *verdict = sight_step_verdict_to_string (step->verdict);
  const char *code = step->error != NULL ? sight_error_code_to_string (step->error->code) : NULL;
  const char *text = step->error != NULL ? step->error->message : step->summary;

  if (step->error == NULL)
    self->actions++;
  show_result (self, "do", step->instruction, verdict, code, text);
  json = outcome_json ("do", step->instruction, verdict, code,
                       step->error != NULL ? "explanation" : "summary", text);
  if (step->instruction_masked)
    json_object_set_boolean_member (json_node_get_object (json), "masked", TRUE);
  self->total_steps++;
  update_totals (self);
  update_meters (self);
  return json;
}

static void
executed_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(SightComposer) self = user_data;
  g_autoptr(SightStepResult) step = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) json = NULL;

  step = sight_step_execute_finish (result, &error);
  set_running (self, FALSE);
  if (step == NULL)
    return;   /* cancelled: the window is closing or Stop was pressed */

  if (step->direct)
    json = show_direct_result (self, step);
  else
    {
      show_step_result (self, step);
      json = sight_step_result_to_json (step);
    }
  g_signal_emit (self, signals[STEP_FINISHED], 0, json);
}

/* Following another agent ------------------------------------------------- */

static void
followed_step_started_cb (SightAgent             *agent,
                          const SightStepRequest *request,
                          SightComposer          *self)
{
  self->timeout_ms = request->limits.timeout_ms;
  self->max_calls = request->limits.max_model_calls;
  self->max_actions = request->limits.kind == SIGHT_STEP_ACT ? request->limits.max_actions : 0;
  self->model_calls = 0;
  self->actions = 0;
  self->started_us = g_get_monotonic_time ();
  self->following = TRUE;
  self->stopping_followed = FALSE;
  g_free (self->followed_kind);
  self->followed_kind = g_strdup (sight_step_kind_to_string (request->limits.kind));
  g_free (self->followed_instruction);
  self->followed_instruction = g_strdup (request->instruction);
  /* Stop stops the client's step too. */
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "composer.stop", TRUE);
  update_tick (self);
  update_meters (self);
}

static void
end_following (SightComposer *self)
{
  self->following = FALSE;
  self->finished_us = g_get_monotonic_time ();
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "composer.stop",
                                 self->running || self->delay_source != 0);
  update_tick (self);
}

static void
followed_action_performed_cb (SightAgent    *agent,
                              const char    *line,
                              SightComposer *self)
{
  /* Ahead of the next "budget-changed", which comes with the next model call. */
  self->actions++;
  update_meters (self);
}

static void
followed_step_finished_cb (SightAgent      *agent,
                           SightStepResult *step,
                           SightComposer   *self)
{
  end_following (self);
  show_step_result (self, step);
}

/* The client cancelled its step, or Stop stopped it. */
static void
followed_step_cancelled_cb (SightAgent    *agent,
                            const char    *reason,
                            SightComposer *self)
{
  end_following (self);
  show_result (self, self->followed_kind, self->followed_instruction, "fail", NULL,
               self->stopping_followed ? _("Stopped") : reason);
}

static JsonNode *
parse_json_view (GtkTextView  *view,
                 const char   *what,
                 GError      **error)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (view);
  GtkTextIter start, end;
  g_autofree char *text = NULL;
  g_autoptr(GError) local_error = NULL;
  JsonNode *node;

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  text = g_strstrip (gtk_text_buffer_get_text (buffer, &start, &end, FALSE));
  if (*text == '\0')
    return NULL;
  node = sight_json_parse (text, -1, SIGHT_JSON_MAX_DEPTH, &local_error);
  if (node == NULL)
    g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                 _("%s is not valid JSON: %s"), what, local_error->message);
  return node;
}

/* A step that could not start still has an outcome: it is shown and
 * reported like any other. */
static void
fail_before_start (SightComposer *self,
                   const char    *kind,
                   const char    *instruction,
                   GError        *error)
{
  const char *code = error->domain == SIGHT_ERROR
                     ? sight_error_code_to_string (error->code) : NULL;
  const char *verdict = error->domain == SIGHT_ERROR && sight_error_code_is_blocked (error->code)
                        ? "blocked" : "fail";
  g_autoptr(JsonNode) json = NULL;

  show_result (self, kind, instruction, verdict, code, error->message);
  json = outcome_json (kind, instruction, verdict, code, "explanation", error->message);
  emit_finished (self, json);
}

SightAgent *
sight_composer_new_agent (SightComposer *self,
                          const char    *agent_name)
{
  SightAgent *agent;
  const SightAgentConfig *config;

  g_return_val_if_fail (SIGHT_IS_COMPOSER (self), NULL);
  g_return_val_if_fail (self->page != NULL, NULL);

  agent = sight_agent_new (self->project, self->page);
  config = sight_project_resolve_agent (self->project,
                                        agent_name != NULL && *agent_name ? agent_name : NULL,
                                        NULL);
  /* The preferences' model serves an agent that names none. */
  if (config != NULL && config->provider == NULL && self->provider != NULL)
    sight_agent_set_provider (agent, self->provider);
  g_signal_connect_object (agent, "budget-changed", G_CALLBACK (budget_changed_cb), self, 0);
  g_signal_connect_object (agent, "model-call-started", G_CALLBACK (model_call_started_cb), self,
                           0);
  g_signal_connect_object (agent, "action-starting", G_CALLBACK (action_starting_cb), self, 0);
  /* Demo mode's slow motion pauses before each of act's actions too, so
   * that their targets show outlined first. */
  sight_agent_set_action_delay (agent, self->start_delay_ms);
  return agent;
}

void
sight_composer_show_step_result (SightComposer   *self,
                                 SightStepResult *step)
{
  g_autoptr(JsonNode) json = NULL;

  g_return_if_fail (SIGHT_IS_COMPOSER (self));
  g_return_if_fail (step != NULL);

  if (step->direct)
    json = show_direct_result (self, step);
  else
    show_step_result (self, step);
}

/* Runs @instruction as a @kind step: with @step_options (a test file's step
 * members other than the instruction) when given, else with what the
 * composer's fields say. */
static gboolean
start_run_full (SightComposer *self,
                const char    *kind,
                const char    *instruction,
                JsonObject    *step_options)
{
  g_autoptr(JsonNode) params = NULL;
  g_autoptr(GError) error = NULL;

  if (self->running || self->page == NULL)
    return FALSE;

  g_clear_object (&self->run_cancellable);
  self->run_cancellable = g_cancellable_new ();
  if (self->cancellable != NULL)
    g_signal_connect_object (self->cancellable, "cancelled",
                             G_CALLBACK (g_cancellable_cancel), self->run_cancellable,
                             G_CONNECT_SWAPPED);
  self->model_calls = 0;
  self->actions = 0;
  self->started_us = g_get_monotonic_time ();

  if (step_options != NULL)
    {
      if (json_object_has_member (step_options, "params"))
        params = json_node_copy (json_object_get_member (step_options, "params"));
    }
  else
    params = parse_json_view (self->params_view, _("Params"), &error);
  if (error != NULL)
    {
      fail_before_start (self, kind, instruction, error);
      return TRUE;
    }

  g_autoptr(JsonObject) options = json_object_new ();
  g_autoptr(JsonNode) schema = NULL;
  g_autoptr(SightStepRequest) request = NULL;
  SightStepKind step_kind = SIGHT_STEP_ACT;
  guint vision = gtk_drop_down_get_selected (self->vision_dropdown);
  const char *agent = gtk_editable_get_text (GTK_EDITABLE (self->agent_entry));
  gboolean direct = g_str_equal (kind, "do");
  guint direct_timeout = step_options != NULL
                         ? (guint) json_object_get_int_member_with_default (step_options,
                                                                            "timeout", 0)
                         : (guint) gtk_spin_button_get_value_as_int (self->timeout_spin);

  sight_step_kind_from_string (kind, &step_kind);
  if (step_options != NULL)
    {
      json_object_unref (options);
      options = json_object_ref (step_options);
      agent = json_object_get_string_member_with_default (step_options, "agent", "");
    }
  else if (direct)
    {
      if (params != NULL)
        json_object_set_member (options, "params", g_steal_pointer (&params));
    }
  else
    {
      if (params != NULL)
        json_object_set_member (options, "params", g_steal_pointer (&params));
      if (step_kind == SIGHT_STEP_EXTRACT)
        {
          schema = parse_json_view (self->schema_view, _("The schema"), &error);
          if (error != NULL)
            {
              fail_before_start (self, kind, instruction, error);
              return TRUE;
            }
          if (schema != NULL)
            json_object_set_member (options, "schema", g_steal_pointer (&schema));
        }
      if (vision == 1 || vision == 2)
        json_object_set_boolean_member (options, "vision", vision == 2);
      else if (vision == 3)
        json_object_set_string_member (options, "vision", "only");
      if (gtk_spin_button_get_value_as_int (self->timeout_spin) > 0)
        json_object_set_int_member (options, "timeout",
                                    gtk_spin_button_get_value_as_int (self->timeout_spin));
      if (step_kind == SIGHT_STEP_ACT &&
          gtk_spin_button_get_value_as_int (self->max_steps_spin) > 0)
        json_object_set_int_member (options, "maxSteps",
                                    gtk_spin_button_get_value_as_int (self->max_steps_spin));
      if ((step_kind == SIGHT_STEP_ACT || step_kind == SIGHT_STEP_WAIT_FOR) &&
          gtk_spin_button_get_value_as_int (self->max_calls_spin) > 0)
        json_object_set_int_member (options, "maxModelCalls",
                                    gtk_spin_button_get_value_as_int (self->max_calls_spin));
      if (*agent != '\0')
        json_object_set_string_member (options, "agent", agent);
    }

  if (!direct && step_kind == SIGHT_STEP_ACT && self->default_max_steps > 0 &&
      !json_object_has_member (options, "maxSteps"))
    json_object_set_int_member (options, "maxSteps", self->default_max_steps);
  if (!direct && (step_kind == SIGHT_STEP_ACT || step_kind == SIGHT_STEP_WAIT_FOR) &&
      self->default_max_calls > 0 && !json_object_has_member (options, "maxModelCalls"))
    json_object_set_int_member (options, "maxModelCalls", self->default_max_calls);
  if (!direct && step_kind != SIGHT_STEP_ACT && self->default_vision != NULL &&
      !json_object_has_member (options, "vision"))
    {
      if (g_str_equal (self->default_vision, "only"))
        json_object_set_string_member (options, "vision", "only");
      else if (g_str_equal (self->default_vision, "on"))
        json_object_set_boolean_member (options, "vision", TRUE);
    }

  request = sight_step_request_new_for_kind (self->project, kind, instruction, options, NULL,
                                             -1, direct_timeout > 0 ? direct_timeout
                                                                    : DIRECT_STEP_TIMEOUT_MS,
                                             &error);
  if (request == NULL)
    {
      fail_before_start (self, kind, instruction, error);
      return TRUE;
    }
  /* No model: the step is blocked before it opens, with what to set. */
  {
    g_autofree char *hint = NULL;

    if (!request->direct &&
        !model_configured (self, kind, *agent != '\0' ? agent : NULL, &hint))
      {
        error = g_error_new (SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE, "%s",
                             hint != NULL && *hint ? hint : _("No model configured"));
        fail_before_start (self, kind, instruction, error);
        update_kind (self);
        return TRUE;
      }
  }
  self->timeout_ms = request->limits.timeout_ms;
  self->max_calls = request->limits.max_model_calls;
  self->max_actions = request->direct ? 1
                      : step_kind == SIGHT_STEP_ACT ? request->limits.max_actions : 0;

  g_clear_object (&self->agent);
  self->agent = sight_composer_new_agent (self, agent);
  set_running (self, TRUE);
  update_meters (self);
  sight_step_execute_async (self->agent, g_steal_pointer (&request), self->run_cancellable,
                            executed_cb, g_object_ref (self));
  return TRUE;
}

static gboolean
delay_done_cb (gpointer user_data)
{
  SightComposer *self = user_data;
  g_autofree char *kind = g_steal_pointer (&self->delayed_kind);
  g_autofree char *instruction = g_steal_pointer (&self->delayed_instruction);
  g_autoptr(JsonObject) options = g_steal_pointer (&self->delayed_options);

  self->delay_source = 0;
  start_run_full (self, kind, instruction, options);
  return G_SOURCE_REMOVE;
}

static void
clear_delayed (SightComposer *self)
{
  g_clear_handle_id (&self->delay_source, g_source_remove);
  g_clear_pointer (&self->delayed_kind, g_free);
  g_clear_pointer (&self->delayed_instruction, g_free);
  g_clear_pointer (&self->delayed_options, json_object_unref);
}

/* Announces the step (::step-started), then starts it, after the start
 * delay when one is set. */
static gboolean
start_run_delayed (SightComposer *self,
                   const char    *kind,
                   const char    *instruction,
                   JsonObject    *step_options)
{
  if (self->running || self->page == NULL || self->delay_source != 0)
    return FALSE;
  g_signal_emit (self, signals[STEP_STARTED], 0, kind, instruction);
  if (self->start_delay_ms == 0)
    return start_run_full (self, kind, instruction, step_options);
  self->delayed_kind = g_strdup (kind);
  self->delayed_instruction = g_strdup (instruction);
  self->delayed_options = step_options != NULL ? json_object_ref (step_options) : NULL;
  self->delay_source = g_timeout_add (self->start_delay_ms, delay_done_cb, self);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "composer.run", FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "composer.stop", TRUE);
  return TRUE;
}

static void
start_run (SightComposer *self)
{
  const char *instruction = gtk_editable_get_text (GTK_EDITABLE (self->instruction_entry));

  if (self->running || self->page == NULL)
    return;
  if (*instruction == '\0')
    {
      gtk_widget_grab_focus (GTK_WIDGET (self->instruction_entry));
      gtk_widget_error_bell (GTK_WIDGET (self));
      return;
    }
  start_run_delayed (self, sight_composer_get_kind (self), instruction, NULL);
}

static void
run_action (GtkWidget  *widget,
            const char *action_name,
            GVariant   *parameter)
{
  start_run (SIGHT_COMPOSER (widget));
}

static void
stop_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  SightComposer *self = SIGHT_COMPOSER (widget);

  if (self->delay_source != 0)
    {
      g_autoptr(GError) error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                                     _("Stopped"));
      g_autofree char *kind = g_strdup (self->delayed_kind);
      g_autofree char *instruction = g_strdup (self->delayed_instruction);

      clear_delayed (self);
      gtk_widget_action_set_enabled (GTK_WIDGET (self), "composer.run", TRUE);
      gtk_widget_action_set_enabled (GTK_WIDGET (self), "composer.stop", FALSE);
      fail_before_start (self, kind, instruction, error);
      return;
    }
  if (self->run_cancellable != NULL)
    g_cancellable_cancel (self->run_cancellable);
  if (self->following && self->followed != NULL)
    {
      self->stopping_followed = TRUE;
      /* Goes to the client, untranslated like the rest of its errors. */
      sight_agent_stop (self->followed, "the step was stopped in the Sightline window");
    }
}

static void
instruction_activate_cb (GtkEntry      *entry,
                         SightComposer *self)
{
  start_run (self);
}

static void
sight_composer_dispose (GObject *object)
{
  SightComposer *self = SIGHT_COMPOSER (object);

  if (self->run_cancellable != NULL)
    g_cancellable_cancel (self->run_cancellable);
  g_clear_handle_id (&self->tick_source, g_source_remove);
  clear_delayed (self);
  g_clear_object (&self->run_cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->agent);
  sight_composer_follow_agent (self, NULL);
  g_clear_object (&self->page);
  g_clear_pointer (&self->project, sight_project_unref);
  g_clear_object (&self->provider);
  G_OBJECT_CLASS (sight_composer_parent_class)->dispose (object);
}

static void
sight_composer_finalize (GObject *object)
{
  SightComposer *self = SIGHT_COMPOSER (object);

  g_free (self->verdict);
  g_free (self->provider_hint);
  g_free (self->followed_kind);
  g_free (self->followed_instruction);
  g_free (self->default_vision);
  G_OBJECT_CLASS (sight_composer_parent_class)->finalize (object);
}

static void
sight_composer_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_RUNNING:
      g_value_set_boolean (value, SIGHT_COMPOSER (object)->running);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sight_composer_class_init (SightComposerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sight_composer_dispose;
  object_class->finalize = sight_composer_finalize;

  /**
   * SightComposer::step-finished:
   * @result: the step's result as JSON
   */
  properties[PROP_RUNNING] =
    g_param_spec_boolean ("running", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  object_class->get_property = sight_composer_get_property;
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * SightComposer::step-started:
   * @kind: "do", "act", "assert", "waitFor" or "extract"
   * @instruction: the step's instruction
   *
   * A step is about to start (before the start delay, if any).
   */
  signals[STEP_STARTED] = g_signal_new ("step-started", G_TYPE_FROM_CLASS (klass),
                                        G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                        G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_STRING);
  signals[STEP_FINISHED] = g_signal_new ("step-finished", G_TYPE_FROM_CLASS (klass),
                                         G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                         G_TYPE_NONE, 1, JSON_TYPE_NODE);
  /**
   * SightComposer::action-starting:
   * @ref: (nullable): the ref of the action's target, or %NULL for a tap at
   *   a point
   *
   * The agent of an act step is about to perform an action (before the
   * start delay, if any).
   */
  signals[ACTION_STARTING] = g_signal_new ("action-starting", G_TYPE_FROM_CLASS (klass),
                                           G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                           G_TYPE_NONE, 1, G_TYPE_STRING);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/dev/sightline/Sightline/sight-composer.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, SightComposer, name)
  BIND (kind_dropdown);
  BIND (instruction_entry);
  BIND (params_view);
  BIND (schema_expander);
  BIND (schema_view);
  BIND (vision_dropdown);
  BIND (timeout_spin);
  BIND (max_steps_spin);
  BIND (max_calls_spin);
  BIND (agent_entry);
  BIND (vision_row);
  BIND (max_steps_row);
  BIND (max_calls_row);
  BIND (no_model_revealer);
  BIND (no_model_label);
  BIND (model_preferences_button);
  BIND (result_box);
  BIND (verdict_label);
  BIND (code_label);
  BIND (summary_label);
  BIND (calls_bar);
  BIND (calls_label);
  BIND (actions_bar);
  BIND (actions_label);
  BIND (time_bar);
  BIND (time_label);
  BIND (tokens_label);
  BIND (cost_label);
  BIND (totals_label);
  BIND (timeline);
  BIND (timeline_stack);
#undef BIND
  gtk_widget_class_bind_template_callback (widget_class, kind_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, instruction_activate_cb);

  gtk_widget_class_install_action (widget_class, "composer.run", NULL, run_action);
  gtk_widget_class_install_action (widget_class, "composer.stop", NULL, stop_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Return, GDK_CONTROL_MASK,
                                       "composer.run", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0,
                                       "composer.stop", NULL);
}

static void
sight_composer_init (SightComposer *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->project = sight_project_new_default ();
  self->timeout_ms = DIRECT_STEP_TIMEOUT_MS;
  set_running (self, FALSE);
  update_kind (self);
  update_meters (self);
  update_totals (self);
}

GtkWidget *
sight_composer_new (void)
{
  return g_object_new (SIGHT_TYPE_COMPOSER, NULL);
}

void
sight_composer_set_page (SightComposer *self,
                         SightWebPage  *page)
{
  g_return_if_fail (SIGHT_IS_COMPOSER (self));
  g_set_object (&self->page, page);
}

void
sight_composer_set_cancellable (SightComposer *self,
                                GCancellable  *cancellable)
{
  g_return_if_fail (SIGHT_IS_COMPOSER (self));
  g_set_object (&self->cancellable, cancellable);
}

void
sight_composer_set_kind (SightComposer *self,
                         const char    *kind)
{
  g_return_if_fail (SIGHT_IS_COMPOSER (self));

  for (guint i = 0; kinds[i] != NULL; i++)
    if (g_str_equal (kinds[i], kind))
      gtk_drop_down_set_selected (self->kind_dropdown, i);
}

void
sight_composer_set_instruction (SightComposer *self,
                                const char    *instruction)
{
  g_return_if_fail (SIGHT_IS_COMPOSER (self));
  gtk_editable_set_text (GTK_EDITABLE (self->instruction_entry), instruction);
}

gboolean
sight_composer_get_running (SightComposer *self)
{
  g_return_val_if_fail (SIGHT_IS_COMPOSER (self), FALSE);
  /* A step waiting out the start delay counts as running. */
  return self->running || self->delay_source != 0;
}

const char *
sight_composer_get_verdict (SightComposer *self)
{
  g_return_val_if_fail (SIGHT_IS_COMPOSER (self), NULL);
  return self->verdict;
}

guint
sight_composer_get_n_timeline (SightComposer *self)
{
  g_return_val_if_fail (SIGHT_IS_COMPOSER (self), 0);
  return self->n_timeline;
}

void
sight_composer_get_meters (SightComposer *self,
                           guint         *model_calls,
                           guint         *actions,
                           gint64        *elapsed_ms)
{
  g_return_if_fail (SIGHT_IS_COMPOSER (self));

  if (model_calls != NULL)
    *model_calls = self->model_calls;
  if (actions != NULL)
    *actions = self->actions;
  if (elapsed_ms != NULL)
    *elapsed_ms = elapsed_ms_of (self);
}

gboolean
sight_composer_get_no_model_shown (SightComposer *self)
{
  g_return_val_if_fail (SIGHT_IS_COMPOSER (self), FALSE);
  return gtk_revealer_get_reveal_child (self->no_model_revealer);
}

void
sight_composer_add_recorded_step (SightComposer *self,
                                  JsonNode      *step)
{
  const char * const *keys = kinds;
  JsonObject *object;

  g_return_if_fail (SIGHT_IS_COMPOSER (self));

  if (step == NULL || !JSON_NODE_HOLDS_OBJECT (step))
    return;
  object = json_node_get_object (step);
  for (guint i = 0; keys[i] != NULL; i++)
    if (json_object_has_member (object, keys[i]))
      {
        add_timeline_row (self, keys[i], json_object_get_string_member (object, keys[i]),
                          "recorded", _("Recorded"));
        return;
      }
}

gboolean
sight_composer_run_step (SightComposer *self,
                         const char    *kind,
                         const char    *instruction,
                         JsonObject    *options)
{
  g_autoptr(JsonObject) empty = NULL;

  g_return_val_if_fail (SIGHT_IS_COMPOSER (self), FALSE);
  g_return_val_if_fail (kind != NULL && instruction != NULL, FALSE);

  if (self->running || self->page == NULL)
    return FALSE;
  /* The fields show what runs. */
  sight_composer_set_kind (self, kind);
  sight_composer_set_instruction (self, instruction);
  if (options == NULL)
    options = empty = json_object_new ();
  return start_run_delayed (self, kind, instruction, options);
}

void
sight_composer_set_provider (SightComposer      *self,
                             SightModelProvider *provider,
                             const char         *hint)
{
  g_return_if_fail (SIGHT_IS_COMPOSER (self));

  g_set_object (&self->provider, provider);
  g_free (self->provider_hint);
  self->provider_hint = provider == NULL && hint != NULL ? g_strdup (hint) : NULL;
  update_kind (self);
}

void
sight_composer_set_project (SightComposer *self,
                            SightProject  *project)
{
  g_return_if_fail (SIGHT_IS_COMPOSER (self));
  g_return_if_fail (project != NULL);

  if (self->project == project)
    return;
  g_clear_pointer (&self->project, sight_project_unref);
  self->project = sight_project_ref (project);
  update_kind (self);
}

void
sight_composer_set_defaults (SightComposer *self,
                             guint          max_steps,
                             guint          max_model_calls,
                             const char    *vision)
{
  g_return_if_fail (SIGHT_IS_COMPOSER (self));

  self->default_max_steps = max_steps;
  self->default_max_calls = max_model_calls;
  g_free (self->default_vision);
  self->default_vision = g_strdup (vision);
}

void
sight_composer_set_start_delay (SightComposer *self,
                                guint          delay_ms)
{
  g_return_if_fail (SIGHT_IS_COMPOSER (self));

  self->start_delay_ms = delay_ms;
}

SightProject *
sight_composer_get_project (SightComposer *self)
{
  g_return_val_if_fail (SIGHT_IS_COMPOSER (self), NULL);

  return self->project;
}

void
sight_composer_follow_agent (SightComposer *self,
                             SightAgent    *agent)
{
  g_return_if_fail (SIGHT_IS_COMPOSER (self));
  g_return_if_fail (agent == NULL || SIGHT_IS_AGENT (agent));

  if (self->followed == agent)
    return;
  if (self->followed != NULL)
    g_signal_handlers_disconnect_by_data (self->followed, self);
  g_set_object (&self->followed, agent);
  if (self->following)
    end_following (self);
  if (agent == NULL)
    return;
  g_signal_connect_object (agent, "step-started", G_CALLBACK (followed_step_started_cb), self, 0);
  g_signal_connect_object (agent, "budget-changed", G_CALLBACK (budget_changed_cb), self, 0);
  g_signal_connect_object (agent, "model-call-started",
                           G_CALLBACK (model_call_started_cb), self, 0);
  g_signal_connect_object (agent, "action-performed",
                           G_CALLBACK (followed_action_performed_cb), self, 0);
  g_signal_connect_object (agent, "step-finished", G_CALLBACK (followed_step_finished_cb),
                           self, 0);
  g_signal_connect_object (agent, "step-cancelled", G_CALLBACK (followed_step_cancelled_cb),
                           self, 0);
}
