/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-store"

#include "config.h"

#include "sight-store.h"

#include <string.h>

#include "sight-error.h"
#include "sight-store-private.h"

/* ---------------------------------------------------------------- verdicts */

static const char * const verdict_names[] = {
  [SIGHT_RUN_VERDICT_RUNNING] = "running",
  [SIGHT_RUN_VERDICT_PASS] = "pass",
  [SIGHT_RUN_VERDICT_FAIL] = "fail",
  [SIGHT_RUN_VERDICT_ERROR] = "error",
  [SIGHT_RUN_VERDICT_SKIPPED] = "skipped",
  [SIGHT_RUN_VERDICT_INTERRUPTED] = "interrupted",
};

const char *
sight_run_verdict_to_string (SightRunVerdict verdict)
{
  if ((guint) verdict < G_N_ELEMENTS (verdict_names))
    return verdict_names[verdict];
  return "error";
}

gboolean
sight_run_verdict_from_string (const char   *name,
                           SightRunVerdict *out)
{
  if (name == NULL)
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (verdict_names); i++)
    if (g_str_equal (name, verdict_names[i]))
      {
        if (out)
          *out = i;
        return TRUE;
      }
  return FALSE;
}

SightRunVerdict
_sight_store_verdict_parse (const char *name)
{
  SightRunVerdict v = SIGHT_RUN_VERDICT_ERROR;

  sight_run_verdict_from_string (name, &v);
  return v;
}

/* ----------------------------------------------------------------- records */

void
sight_session_record_free (SightSessionRecord *r)
{
  if (r == NULL)
    return;
  g_free (r->id);
  g_free (r->title);
  g_free (r->status);
  g_free (r);
}

void
sight_run_record_free (SightRunRecord *r)
{
  if (r == NULL)
    return;
  g_free (r->id);
  g_free (r->session_id);
  g_free (r->kind);
  g_free (r->name);
  g_free (r->url);
  g_free (r->code);
  g_free (r->explanation);
  g_free (r->final_url);
  g_free (r->answer);
  g_strfreev (r->notes);
  g_free (r);
}

SightRunRecord *
sight_run_record_copy (const SightRunRecord *r)
{
  SightRunRecord *c;

  g_return_val_if_fail (r != NULL, NULL);

  c = g_new0 (SightRunRecord, 1);
  *c = *r;
  c->id = g_strdup (r->id);
  c->session_id = g_strdup (r->session_id);
  c->kind = g_strdup (r->kind);
  c->name = g_strdup (r->name);
  c->url = g_strdup (r->url);
  c->code = g_strdup (r->code);
  c->explanation = g_strdup (r->explanation);
  c->final_url = g_strdup (r->final_url);
  c->answer = g_strdup (r->answer);
  c->notes = g_strdupv (r->notes);
  return c;
}

gboolean
sight_run_record_is_unstored (const SightRunRecord *r)
{
  g_return_val_if_fail (r != NULL, FALSE);
  return r->verdict == SIGHT_RUN_VERDICT_ERROR && r->explanation != NULL &&
         g_str_has_prefix (r->explanation, UNSTORED);
}

void
sight_step_record_free (SightStepRecord *r)
{
  if (r == NULL)
    return;
  g_free (r->run_id);
  g_free (r->kind);
  g_free (r->label);
  g_free (r->instruction);
  g_free (r->options_json);
  g_free (r->code);
  g_free (r->explanation);
  g_free (r->usage_json);
  g_free (r->cache_json);
  g_free (r->budget_json);
  g_free (r);
}

void
sight_observation_record_free (SightObservationRecord *r)
{
  if (r == NULL)
    return;
  g_free (r->run_id);
  g_free (r->phase);
  g_free (r->url);
  g_free (r->title);
  g_free (r->tree_json);
  g_free (r->tree_text);
  g_clear_pointer (&r->screenshot, g_bytes_unref);
  g_free (r->screenshot_mime);
  g_free (r);
}

void
sight_model_call_record_free (SightModelCallRecord *r)
{
  if (r == NULL)
    return;
  g_free (r->run_id);
  g_free (r->provider);
  g_free (r->model);
  g_free (r->request_json);
  g_free (r->response_json);
  g_free (r->request_id);
  g_free (r);
}

void
sight_log_record_free (SightLogRecord *r)
{
  if (r == NULL)
    return;
  g_free (r->run_id);
  g_free (r->kind);
  g_free (r->level);
  g_free (r->text);
  g_free (r->url);
  g_free (r);
}

const char *
sight_run_data_get_step_evidence (const SightRunData *data,
                                  guint               index)
{
  g_return_val_if_fail (data != NULL, NULL);

  for (guint i = 0; data->artifacts != NULL && i < data->artifacts->len; i++)
    {
      const SightArtifactRecord *a = data->artifacts->pdata[i];

      if (a->step_index == (int) index && a->path != NULL && g_str_has_prefix (a->mime, "image/"))
        return a->path;
    }
  return NULL;
}

void
sight_artifact_record_free (SightArtifactRecord *r)
{
  if (r == NULL)
    return;
  g_free (r->run_id);
  g_free (r->name);
  g_free (r->mime);
  g_clear_pointer (&r->data, g_bytes_unref);
  g_free (r->path);
  g_free (r);
}

void
sight_run_data_free (SightRunData *d)
{
  if (d == NULL)
    return;
  sight_run_record_free (d->run);
  g_clear_pointer (&d->steps, g_ptr_array_unref);
  g_clear_pointer (&d->observations, g_ptr_array_unref);
  g_clear_pointer (&d->model_calls, g_ptr_array_unref);
  g_clear_pointer (&d->logs, g_ptr_array_unref);
  g_clear_pointer (&d->artifacts, g_ptr_array_unref);
  g_free (d);
}

const SightArtifactRecord *
sight_run_data_find_video (const SightRunData *data)
{
  g_return_val_if_fail (data != NULL, NULL);

  for (guint i = 0; data->artifacts != NULL && i < data->artifacts->len; i++)
    {
      const SightArtifactRecord *a = g_ptr_array_index (data->artifacts, i);

      /* A row of schema 3's first days named an absolute path: no file of
       * the run's own, so no recording. */
      if (g_strcmp0 (a->mime, SIGHT_ARTIFACT_VIDEO_MIME) == 0 && a->data == NULL &&
          a->path != NULL)
        return a;
    }
  return NULL;
}

SightSessionRecord *
_sight_store_session_copy (const SightSessionRecord *s)
{
  SightSessionRecord *c = g_new0 (SightSessionRecord, 1);

  if (s)
    {
      *c = *s;
      c->id = g_strdup (s->id);
      c->title = g_strdup (s->title);
      c->status = g_strdup (s->status);
    }
  return c;
}

SightStepRecord *
_sight_store_step_copy (const SightStepRecord *r)
{
  SightStepRecord *c = g_new0 (SightStepRecord, 1);

  *c = *r;
  c->run_id = g_strdup (r->run_id);
  c->kind = g_strdup (r->kind);
  c->label = g_strdup (r->label);
  c->instruction = g_strdup (r->instruction);
  c->options_json = g_strdup (r->options_json);
  c->code = g_strdup (r->code);
  c->explanation = g_strdup (r->explanation);
  c->usage_json = g_strdup (r->usage_json);
  c->cache_json = g_strdup (r->cache_json);
  c->budget_json = g_strdup (r->budget_json);
  return c;
}

SightObservationRecord *
_sight_store_observation_copy (const SightObservationRecord *r)
{
  SightObservationRecord *c = g_new0 (SightObservationRecord, 1);

  *c = *r;
  c->run_id = g_strdup (r->run_id);
  c->phase = g_strdup (r->phase);
  c->url = g_strdup (r->url);
  c->title = g_strdup (r->title);
  c->tree_json = g_strdup (r->tree_json);
  c->tree_text = g_strdup (r->tree_text);
  c->screenshot = r->screenshot ? g_bytes_ref (r->screenshot) : NULL;
  c->screenshot_mime = g_strdup (r->screenshot_mime);
  return c;
}

SightModelCallRecord *
_sight_store_model_call_copy (const SightModelCallRecord *r)
{
  SightModelCallRecord *c = g_new0 (SightModelCallRecord, 1);

  *c = *r;
  c->run_id = g_strdup (r->run_id);
  c->provider = g_strdup (r->provider);
  c->model = g_strdup (r->model);
  c->request_json = g_strdup (r->request_json);
  c->response_json = g_strdup (r->response_json);
  c->request_id = g_strdup (r->request_id);
  return c;
}

SightLogRecord *
_sight_store_log_copy (const SightLogRecord *r)
{
  SightLogRecord *c = g_new0 (SightLogRecord, 1);

  *c = *r;
  c->run_id = g_strdup (r->run_id);
  c->kind = g_strdup (r->kind);
  c->level = g_strdup (r->level);
  c->text = g_strdup (r->text);
  c->url = g_strdup (r->url);
  return c;
}

SightArtifactRecord *
_sight_store_artifact_copy (const SightArtifactRecord *r)
{
  SightArtifactRecord *c = g_new0 (SightArtifactRecord, 1);

  *c = *r;
  c->run_id = g_strdup (r->run_id);
  c->name = g_strdup (r->name);
  c->mime = g_strdup (r->mime);
  c->data = r->data ? g_bytes_ref (r->data) : NULL;
  c->path = g_strdup (r->path);
  return c;
}
