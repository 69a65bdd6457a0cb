/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-run-recorder"

#include "config.h"

#include "sight-run-recorder.h"

#include "sight-error.h"
#include "sight-run-record.h"

/* How long a step's screenshot, taken while the next step goes on, may keep
 * the run from closing. */
#define SHOT_TIMEOUT_MS 10000

typedef struct _DeferredClose DeferredClose;
typedef struct _LaterShot LaterShot;

struct _SightRunRecorder
{
  GObject     parent_instance;

  /* owned */
  SightStore *store;
  char       *run_id;

  /* the open step */
  guint       index;          /* the next step's index */
  gint64      step_started;
  JsonObject *step_options;
  gboolean    label_is_instruction;
  gboolean    step_open;

  /* the step that closed last, for what is kept of the page after it */
  gboolean    closed_screenshot;
  GError     *closed_error;

  /* screenshots still being taken and encoded; the run closes after them */
  guint          shots_pending;
  DeferredClose *deferred_close;

  /* the page as last recorded after a step, recorded again for the steps
   * after which the page is still as it was */
  SightObservation  *recorded;
  SightObserveFlags  recorded_flags;
  gboolean           recorded_shot;    /* with its screenshot (taken or being taken) */
  LaterShot         *recorded_later;   /* its screenshot, while it is being taken */
};

G_DEFINE_FINAL_TYPE (SightRunRecorder, sight_run_recorder, G_TYPE_OBJECT)

static void
sight_run_recorder_finalize (GObject *object)
{
  SightRunRecorder *self = SIGHT_RUN_RECORDER (object);

  g_clear_object (&self->store);
  g_free (self->run_id);
  g_clear_pointer (&self->step_options, json_object_unref);
  g_clear_error (&self->closed_error);
  g_clear_object (&self->recorded);

  G_OBJECT_CLASS (sight_run_recorder_parent_class)->finalize (object);
}

static void
sight_run_recorder_class_init (SightRunRecorderClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sight_run_recorder_finalize;
}

static void
sight_run_recorder_init (SightRunRecorder *self)
{
}

static void
write_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  if (!sight_store_write_finish (SIGHT_STORE (source), result, &error) &&
      !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_warning ("Could not store a run's progress: %s", error->message);
}

SightRunVerdict
sight_run_verdict_for_error (const GError *error)
{
  if (error == NULL)
    return SIGHT_RUN_VERDICT_PASS;
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return SIGHT_RUN_VERDICT_INTERRUPTED;
  if (g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED) ||
      g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_ASSERTION_FAILED))
    return SIGHT_RUN_VERDICT_FAIL;
  return SIGHT_RUN_VERDICT_ERROR;
}

static SightRunRecorder *
recorder_new (SightStore *store,
              char       *run_id)
{
  SightRunRecorder *self = g_object_new (SIGHT_TYPE_RUN_RECORDER, NULL);

  self->store = g_object_ref (store);
  self->run_id = run_id;
  return self;
}

static SightRunRecord
running (const SightRunRecord *run)
{
  SightRunRecord record = *run;

  record.verdict = SIGHT_RUN_VERDICT_RUNNING;
  if (record.started_at == 0)
    record.started_at = g_get_real_time ();
  return record;
}

SightRunRecorder *
sight_run_recorder_open (SightStore            *store,
                         const SightRunRecord  *run,
                         GError               **error)
{
  SightRunRecord record;
  char *run_id;

  g_return_val_if_fail (SIGHT_IS_STORE (store), NULL);
  g_return_val_if_fail (run != NULL, NULL);

  record = running (run);
  run_id = sight_store_open_run (store, &record, error);
  return run_id != NULL ? recorder_new (store, run_id) : NULL;
}

SightRunRecorder *
sight_run_recorder_open_async (SightStore           *store,
                               const SightRunRecord *run)
{
  SightRunRecord record;

  g_return_val_if_fail (SIGHT_IS_STORE (store), NULL);
  g_return_val_if_fail (run != NULL, NULL);

  record = running (run);
  return recorder_new (store, sight_store_open_run_async (store, &record, NULL, write_done_cb,
                                                          NULL));
}

const char *
sight_run_recorder_get_run_id (SightRunRecorder *self)
{
  g_return_val_if_fail (SIGHT_IS_RUN_RECORDER (self), NULL);

  return self->run_id;
}

SightStore *
sight_run_recorder_get_store (SightRunRecorder *self)
{
  g_return_val_if_fail (SIGHT_IS_RUN_RECORDER (self), NULL);

  return self->store;
}

guint
sight_run_recorder_get_n_steps (SightRunRecorder *self)
{
  g_return_val_if_fail (SIGHT_IS_RUN_RECORDER (self), 0);

  return self->index;
}

static char *
options_text (JsonObject *options)
{
  g_autoptr(JsonNode) node = NULL;

  if (options == NULL || json_object_get_size (options) == 0)
    return NULL;
  node = json_node_new (JSON_NODE_OBJECT);
  json_node_set_object (node, options);
  return json_to_string (node, FALSE);
}

void
sight_run_recorder_step_open (SightRunRecorder *self,
                              const char       *kind,
                              const char       *label,
                              const char       *instruction,
                              JsonObject       *options)
{
  SightStepRecord step = { 0 };
  g_autofree char *options_json = options_text (options);

  g_return_if_fail (SIGHT_IS_RUN_RECORDER (self));
  g_return_if_fail (kind != NULL);
  g_return_if_fail (!self->step_open);

  step.run_id = self->run_id;
  step.index = self->index;
  step.kind = (char *) kind;
  step.label = (char *) label;
  step.instruction = (char *) instruction;
  step.options_json = options_json;
  step.verdict = SIGHT_RUN_VERDICT_RUNNING;
  step.started_at = g_get_real_time ();
  self->step_started = step.started_at;
  g_clear_pointer (&self->step_options, json_object_unref);
  self->step_options = options != NULL ? json_object_ref (options) : NULL;
  self->label_is_instruction = label != NULL && g_strcmp0 (label, instruction) == 0;
  self->step_open = TRUE;
  sight_store_add_step_async (self->store, &step, NULL, write_done_cb, NULL);
}

SightRunVerdict
sight_run_recorder_step_close (SightRunRecorder *self,
                               SightRunVerdict   verdict,
                               const GError     *error,
                               const char       *explanation,
                               SightStepResult  *result,
                               const char       *instruction)
{
  SightStepRecord step = { 0 };
  g_autofree char *usage_json = NULL;
  g_autofree char *cache_json = NULL;
  /* Written again: a param typed into a secure field is a secret from now
   * on (sight_secret_fill_note_typed()), and the store masks it there. */
  g_autofree char *options_json = options_text (self->step_options);

  g_return_val_if_fail (SIGHT_IS_RUN_RECORDER (self), verdict);
  g_return_val_if_fail (self->step_open, verdict);

  /* Cancelled (the caller went away): the step did not fail, it was cut off. */
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      verdict = SIGHT_RUN_VERDICT_INTERRUPTED;
      error = NULL;
      explanation = "Interrupted";
    }
  step.run_id = self->run_id;
  step.index = self->index;
  step.instruction = (char *) instruction;
  step.label = self->label_is_instruction ? (char *) instruction : NULL;
  step.options_json = options_json;
  step.verdict = verdict;
  step.started_at = self->step_started;
  step.finished_at = g_get_real_time ();
  step.explanation = (char *) explanation;
  if (error != NULL)
    {
      step.code = (char *) sight_error_code_to_string (error->domain == SIGHT_ERROR
                                                       ? (SightErrorCode) error->code
                                                       : SIGHT_ERROR_INTERNAL);
      step.explanation = (char *) error->message;
    }
  /* A direct step spends no model: its row has no usage. */
  if (result != NULL && !result->direct)
    {
      g_autoptr(JsonNode) usage = sight_usage_to_json (&result->usage);

      usage_json = json_to_string (usage, FALSE);
      if (result->cache != NULL)
        cache_json = json_to_string (result->cache, FALSE);
      step.usage_json = usage_json;
      step.cache_json = cache_json;
      step.model_calls = result->model_calls;
      step.actions = result->actions;
    }
  sight_store_finish_step_async (self->store, &step, NULL, write_done_cb, NULL);
  /* The option is checked when the step's request is made (only assert takes
   * it); a step that did not validate did not run. */
  self->closed_screenshot = self->step_options == NULL ||
    json_object_get_boolean_member_with_default (self->step_options, "screenshot", TRUE);
  g_clear_error (&self->closed_error);
  self->closed_error = error != NULL ? g_error_copy (error) : NULL;
  g_clear_pointer (&self->step_options, json_object_unref);
  self->step_open = FALSE;
  self->index++;
  return verdict;
}

SightRunVerdict
sight_run_recorder_step_result (SightRunRecorder *self,
                                SightStepResult  *result,
                                const GError     *error,
                                const char       *masked)
{
  g_return_val_if_fail (SIGHT_IS_RUN_RECORDER (self), SIGHT_RUN_VERDICT_ERROR);

  if (result == NULL)
    return sight_run_recorder_step_close (self, sight_run_verdict_for_error (error), error, NULL,
                                          NULL, masked);
  if (result->instruction_masked)
    masked = result->instruction;
  return sight_run_recorder_step_close (self, sight_run_verdict_for_error (result->error),
                                        result->error, result->summary, result, masked);
}

void
sight_run_recorder_step_skip (SightRunRecorder *self,
                              const char       *kind,
                              const char       *label,
                              const char       *instruction,
                              JsonObject       *options,
                              const char       *why)
{
  sight_run_recorder_step_open (self, kind, label, instruction, options);
  sight_run_recorder_step_close (self, SIGHT_RUN_VERDICT_SKIPPED, NULL, why, NULL, NULL);
}

void
sight_run_recorder_step_add (SightRunRecorder      *self,
                             const SightStepRecord *step)
{
  SightStepRecord record;

  g_return_if_fail (SIGHT_IS_RUN_RECORDER (self));
  g_return_if_fail (step != NULL);
  g_return_if_fail (!self->step_open);

  record = *step;
  record.run_id = self->run_id;
  record.index = self->index++;
  sight_store_add_step_async (self->store, &record, NULL, write_done_cb, NULL);
  sight_store_finish_step_async (self->store, &record, NULL, write_done_cb, NULL);
}

void
sight_run_recorder_observe (SightRunRecorder *self,
                            const char       *phase,
                            SightObservation *observation)
{
  g_return_if_fail (SIGHT_IS_RUN_RECORDER (self));
  g_return_if_fail (SIGHT_IS_OBSERVATION (observation));

  sight_run_store_observation (self->store, self->run_id, (int) self->index - 1, phase,
                               observation, TRUE, write_done_cb, NULL);
}

typedef struct {
  SightStepShot     shot;
  guint             index;
  SightObserveFlags flags;
  SightObservation *since;
  SightObservation *observation;
  SightWebPage     *page;
  char             *evidence;
} ObserveStep;

static void
observe_step_free (ObserveStep *data)
{
  g_clear_object (&data->since);
  g_clear_object (&data->observation);
  g_clear_object (&data->page);
  g_free (data->evidence);
  g_free (data);
}

/* The failure's evidence: the screenshot of the page after the step, as an
 * artifact of the step. Returns its path, or NULL when there is no proven
 * masked screenshot to keep. */
static char *
store_evidence (SightRunRecorder *self,
                guint             index,
                SightObservation *observation)
{
  const SightScreenshot *shot = sight_observation_get_screenshot (observation);
  SightArtifactRecord artifact = { 0 };
  g_autofree char *name = NULL;
  const char *mime;

  if (shot == NULL || !sight_observation_masking_proven (observation))
    return NULL;
  mime = sight_screenshot_get_mime_type (shot);
  name = sight_step_evidence_name (index + 1, shot->format, FALSE);
  artifact.run_id = self->run_id;
  artifact.step_index = (int) index;
  artifact.name = name;
  artifact.mime = (char *) mime;
  artifact.data = shot->bytes;
  artifact.created_at = g_get_real_time ();
  sight_store_add_artifact_async (self->store, &artifact, NULL, write_done_cb, NULL);
  return sight_store_artifact_path (self->store, self->run_id, name);
}

/* Screenshots taken while the run goes on -------------------------------- */

typedef struct {
  guint    index;
  gboolean with_screenshot;
} RecordedStep;

struct _DeferredClose {
  SightRunRecord     *record;
  GAsyncReadyCallback callback;
  gpointer            user_data;
};

struct _LaterShot {
  SightRunRecorder *recorder;
  GArray           *steps;        /* RecordedStep: the first one's page, and the steps after it */
  SightObservation *observation;
  GCancellable     *cancellable;
  guint             timeout_id;
};

static void finish_run (SightRunRecorder    *self,
                        const SightRunRecord *run,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data);

static void
deferred_close_free (DeferredClose *close)
{
  sight_run_record_free (close->record);
  g_free (close);
}

static gboolean
later_shot_timeout_cb (gpointer user_data)
{
  LaterShot *later = user_data;

  later->timeout_id = 0;
  g_cancellable_cancel (later->cancellable);
  return G_SOURCE_REMOVE;
}

static void
later_shot_done_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  LaterShot *later = user_data;
  SightRunRecorder *self = later->recorder;
  g_autoptr(GError) error = NULL;
  gboolean shot = sight_observation_capture_screenshot_finish (result, &error);

  if (!shot)
    g_debug ("The page after step %u was kept without its screenshot: %s",
             g_array_index (later->steps, RecordedStep, 0).index + 1, error->message);
  for (guint i = 0; i < later->steps->len; i++)
    {
      RecordedStep *step = &g_array_index (later->steps, RecordedStep, i);

      sight_run_store_observation (self->store, self->run_id, (int) step->index, "after",
                                   later->observation, shot && step->with_screenshot,
                                   write_done_cb, NULL);
    }
  if (self->recorded_later == later)
    {
      self->recorded_later = NULL;
      self->recorded_shot = shot;
    }
  g_clear_handle_id (&later->timeout_id, g_source_remove);
  g_array_unref (later->steps);
  g_object_unref (later->cancellable);
  g_object_unref (later->observation);
  g_free (later);

  if (--self->shots_pending == 0 && self->deferred_close != NULL)
    {
      DeferredClose *close = g_steal_pointer (&self->deferred_close);

      finish_run (self, close->record, close->callback, close->user_data);
      deferred_close_free (close);
    }
  g_object_unref (self);
}

static LaterShot *
take_shot_later (SightRunRecorder *self,
                 guint             index,
                 SightObservation *observation,
                 SightWebPage     *page)
{
  LaterShot *later = g_new0 (LaterShot, 1);
  RecordedStep step = { index, TRUE };

  later->recorder = g_object_ref (self);
  later->steps = g_array_new (FALSE, FALSE, sizeof (RecordedStep));
  g_array_append_val (later->steps, step);
  later->observation = g_object_ref (observation);
  later->cancellable = g_cancellable_new ();
  later->timeout_id = g_timeout_add (SHOT_TIMEOUT_MS, later_shot_timeout_cb, later);
  self->shots_pending++;
  sight_observation_capture_screenshot_async (observation, page, later->cancellable,
                                              later_shot_done_cb, later);
  return later;
}

/* Step @index is recorded with the page as it was recorded last: once its
 * screenshot is in, when it is still being taken. */
static void
record_again (SightRunRecorder *self,
              guint             index,
              gboolean          with_screenshot)
{
  if (self->recorded_later != NULL)
    {
      RecordedStep step = { index, with_screenshot };

      g_array_append_val (self->recorded_later->steps, step);
      return;
    }
  sight_run_store_observation (self->store, self->run_id, (int) index, "after", self->recorded,
                               with_screenshot, write_done_cb, NULL);
}

/* @observation is the page after the step, recorded from now on. */
static void
set_recorded (SightRunRecorder  *self,
              SightObservation  *observation,
              SightObserveFlags  flags,
              gboolean           with_screenshot,
              LaterShot         *later)
{
  g_set_object (&self->recorded, observation);
  self->recorded_flags = flags & ~SIGHT_OBSERVE_SCREENSHOT;
  self->recorded_shot = with_screenshot;
  self->recorded_later = later;
}

static void
step_observed_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  SightRunRecorder *self = g_task_get_source_object (task);
  ObserveStep *data = g_task_get_task_data (task);

  data->observation = sight_observation_capture_finish (result, NULL);
  if (data->observation == NULL)
    {
      /* What the page is now is unknown: the next step's is taken anew. */
      set_recorded (self, NULL, 0, FALSE, NULL);
      g_task_return_boolean (task, TRUE);
      return;
    }
  if (data->observation == data->since && data->since == self->recorded)
    {
      /* Nothing changed since the page was recorded last: the same tree
       * and screenshot again, with no walk and no paint. */
      g_debug ("Step %u: the page is as recorded after an earlier step", data->index + 1);
      record_again (self, data->index, data->shot != SIGHT_STEP_SHOT_NONE);
      g_task_return_boolean (task, TRUE);
      return;
    }
  if (data->shot == SIGHT_STEP_SHOT_PAGE)
    {
      /* The page's snapshot is painted when its request arrives, before
       * anything the next step sends: the next step goes on while the
       * pixels are masked, encoded and stored. */
      LaterShot *later = take_shot_later (self, data->index, data->observation, data->page);

      set_recorded (self, data->observation, data->flags, TRUE, later);
      g_task_return_boolean (task, TRUE);
      return;
    }
  sight_run_store_observation (self->store, self->run_id, (int) data->index, "after",
                               data->observation, data->shot != SIGHT_STEP_SHOT_NONE,
                               write_done_cb, NULL);
  if (data->shot == SIGHT_STEP_SHOT_EVIDENCE)
    data->evidence = store_evidence (self, data->index, data->observation);
  set_recorded (self, data->observation, data->flags,
                sight_observation_get_screenshot (data->observation) != NULL, NULL);
  g_task_return_boolean (task, TRUE);
}

void
sight_run_recorder_observe_step_async (SightRunRecorder    *self,
                                       SightWebPage        *page,
                                       SightObserveFlags    flags,
                                       gboolean             secret_filled,
                                       guint                timeout_ms,
                                       GCancellable        *cancellable,
                                       GAsyncReadyCallback  callback,
                                       gpointer             user_data)
{
  GTask *task;
  ObserveStep *data;

  g_return_if_fail (SIGHT_IS_RUN_RECORDER (self));
  g_return_if_fail (SIGHT_IS_WEB_PAGE (page));
  g_return_if_fail (!self->step_open && self->index > 0);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_run_recorder_observe_step_async);
  data = g_new0 (ObserveStep, 1);
  data->index = self->index - 1;
  data->shot = sight_step_shot_for (self->closed_screenshot, self->closed_error, secret_filled);
  g_task_set_task_data (task, data, (GDestroyNotify) observe_step_free);
  data->page = g_object_ref (page);
  data->flags = flags & ~SIGHT_OBSERVE_SCREENSHOT;
  /* The page as recorded last is recorded again if it has not changed
   * since and has what this step keeps; a failure's evidence is always
   * taken anew, with the tree, before the step's result is told. */
  if (self->recorded != NULL && data->shot != SIGHT_STEP_SHOT_EVIDENCE &&
      self->recorded_flags == data->flags &&
      (data->shot == SIGHT_STEP_SHOT_NONE || self->recorded_shot))
    data->since = g_object_ref (self->recorded);
  /* A page's screenshot is taken after the tree (take_shot_later). */
  if (data->shot == SIGHT_STEP_SHOT_EVIDENCE)
    flags |= SIGHT_OBSERVE_SCREENSHOT;
  else
    flags &= ~SIGHT_OBSERVE_SCREENSHOT;
  sight_observation_capture_since_async (page, flags, data->since, MAX (1, timeout_ms),
                                         cancellable, step_observed_cb, task);
}

char *
sight_run_recorder_observe_step_finish (SightRunRecorder  *self,
                                        GAsyncResult      *result,
                                        SightObservation **out_observation)
{
  ObserveStep *data;

  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  data = g_task_get_task_data (G_TASK (result));
  if (out_observation != NULL)
    *out_observation = data->observation ? g_object_ref (data->observation) : NULL;
  return g_steal_pointer (&data->evidence);
}

void
sight_run_recorder_store_log (SightRunRecorder *self,
                              SightWebPage     *page)
{
  sight_run_recorder_store_log_between (self, page, 0, 0);
}

void
sight_run_recorder_store_log_between (SightRunRecorder *self,
                                      SightWebPage     *page,
                                      gint64            since,
                                      gint64            until)
{
  g_return_if_fail (SIGHT_IS_RUN_RECORDER (self));

  sight_run_store_page_log (self->store, self->run_id, page, since, until, write_done_cb, NULL);
}

void
sight_run_recorder_close (SightRunRecorder    *self,
                          SightRunVerdict      verdict,
                          const char          *code,
                          const char          *explanation,
                          const char          *final_url,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  SightRunRecord run = { 0 };

  run.verdict = verdict;
  run.final_url = (char *) final_url;
  if (verdict != SIGHT_RUN_VERDICT_PASS)
    {
      run.code = (char *) code;
      run.explanation = (char *) explanation;
    }
  sight_run_recorder_close_record (self, &run, callback, user_data);
}

void
sight_run_recorder_close_record (SightRunRecorder     *self,
                                 const SightRunRecord *run,
                                 GAsyncReadyCallback   callback,
                                 gpointer              user_data)
{
  g_return_if_fail (SIGHT_IS_RUN_RECORDER (self));
  g_return_if_fail (run != NULL);

  if (self->shots_pending > 0 && self->deferred_close == NULL)
    {
      /* The last steps' screenshots are kept before the run is finished:
       * whoever reads the run back finds them. */
      DeferredClose *close = g_new0 (DeferredClose, 1);

      close->record = sight_run_record_copy (run);
      close->callback = callback;
      close->user_data = user_data;
      self->deferred_close = close;
      return;
    }
  finish_run (self, run, callback, user_data);
}

static void
finish_run (SightRunRecorder     *self,
            const SightRunRecord *run,
            GAsyncReadyCallback   callback,
            gpointer              user_data)
{
  SightRunRecord record = *run;

  record.id = self->run_id;
  sight_store_finish_run_async (self->store, &record, NULL, callback ? callback : write_done_cb,
                                user_data);
}

void
sight_run_recorder_interrupt (SightRunRecorder *self,
                              const char       *explanation,
                              const char       *final_url)
{
  sight_run_recorder_close (self, SIGHT_RUN_VERDICT_INTERRUPTED, NULL, explanation, final_url,
                            NULL, NULL);
}
