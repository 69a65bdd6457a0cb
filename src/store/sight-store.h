/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

#include "sight-usage.h"

G_BEGIN_DECLS

/* The verdict of a run or a step. A run is one of running, pass, fail, error
 * or interrupted (its process died while it was open); a step may also be
 * skipped (a check nobody asked for). */
typedef enum {
  SIGHT_RUN_VERDICT_RUNNING,
  SIGHT_RUN_VERDICT_PASS,
  SIGHT_RUN_VERDICT_FAIL,
  SIGHT_RUN_VERDICT_ERROR,
  SIGHT_RUN_VERDICT_SKIPPED,
  SIGHT_RUN_VERDICT_INTERRUPTED,
} SightRunVerdict;

const char *sight_run_verdict_to_string   (SightRunVerdict  verdict);
gboolean    sight_run_verdict_from_string (const char   *name,
                                       SightRunVerdict *out);

/* Times are microseconds since the epoch (g_get_real_time ()); 0 means "not
 * yet". Every string may be NULL unless a comment says otherwise. JSON fields
 * hold serialized JSON text. Records returned by the store are owned by the
 * caller; records passed in are copied. */

typedef struct {
  char   *id;              /* sess_…; generated when NULL on open */
  char   *title;
  char   *status;          /* "open" or "ended" */
  gint64  created_at;
  gint64  ended_at;
} SightSessionRecord;

typedef struct {
  char         *id;        /* run_…; generated when NULL on open */
  char         *session_id;
  char         *kind;      /* "smoke", "test", "task", … (required) */
  char         *name;      /* a test's name or a task's goal */
  char         *url;       /* the start URL */
  SightRunVerdict  verdict;
  char         *code;      /* an error code name of sight-error.h */
  char         *explanation;
  char         *final_url;
  char         *answer;    /* a task's answer */
  char        **notes;     /* NULL-terminated */
  gint64        started_at;
  gint64        finished_at;

  /* Filled when the store reads a run (ignored on write). */
  guint         n_steps;
  guint         n_steps_passed;
  guint         n_steps_failed;
  guint         n_steps_skipped;
  guint         model_calls;
  guint         actions;
  /* The run's usage: its steps' summed with sight_usage_add () (saturating,
   * tokenAccounting 'provider' only when every call gave provider counts,
   * reported and estimated costs apart), or its model calls' for a run whose
   * steps carry none (a task). */
  SightUsage    usage;
} SightRunRecord;

typedef struct {
  char         *run_id;       /* required */
  guint         index;        /* from 0, unique in its run */
  char         *kind;         /* "act", "assert", "waitFor", "extract", "do", "load", … (required) */
  char         *label;        /* short, e.g. "assert 1 condition"; derived when NULL */
  char         *instruction;  /* with secrets already projected by the caller */
  /* When a step finishes, a NULL label or instruction keeps the one it opened
   * with; a text replaces it (a secret typed literally, masked). */
  char         *options_json;
  SightRunVerdict  verdict;
  char         *code;
  char         *explanation;
  char         *usage_json;   /* the step's usage accounting */
  char         *cache_json;   /* how the trace cache took part */
  char         *budget_json;  /* the limits: maxModelCalls, maxSteps, timeoutMs */
  guint         model_calls;  /* spent */
  guint         actions;      /* spent */
  /* The acted element's box in CSS pixels of the step's "before"
   * observation, for highlighting; has_target FALSE when there is none. */
  gboolean      has_target;
  double        target_x, target_y, target_width, target_height;
  gint64        started_at;
  gint64        finished_at;
} SightStepRecord;

typedef struct {
  gint64   id;               /* assigned by the store */
  char    *run_id;           /* required */
  int      step_index;       /* -1 when not tied to a step */
  char    *phase;            /* "before", "after", "final" (required) */
  char    *url;
  char    *title;
  char    *tree_json;        /* the accessibility tree; stored compressed */
  char    *tree_text;        /* the compact text the model saw; stored compressed */
  GBytes  *screenshot;       /* an encoded image (JPEG, WebP or PNG), stored as is */
  char    *screenshot_mime;
  int      width;            /* of the encoded image */
  int      height;
  double   scale;            /* encoded pixels per CSS pixel */
  gint64   created_at;
} SightObservationRecord;

typedef struct {
  gint64  id;
  char   *run_id;            /* required */
  int     step_index;
  char   *provider;
  char   *model;
  char   *request_json;      /* redacted by the caller; secrets redacted again here */
  char   *response_json;
  gint64  input_tokens;      /* -1 unknown */
  gint64  output_tokens;     /* -1 unknown */
  gint64  cost_micros;       /* the provider's; -1 unknown */
  /* Sightline's estimate from its price table, when it has one */
  gboolean has_estimated_cost;
  gint64  estimated_cost_micros;
  gint64  latency_ms;
  char   *request_id;
  gint64  created_at;
} SightModelCallRecord;

typedef struct {
  gint64  id;
  char   *run_id;            /* required */
  int     step_index;
  char   *kind;              /* "console", "page_error", "request_failed", "broken_link" (required) */
  char   *level;             /* console level: log, info, warning, error, debug */
  char   *text;              /* a broken link's: the page it was found on */
  char   *url;
  guint   status;            /* HTTP status of a failed request, 0 for a network error */
  gint64  created_at;
} SightLogRecord;

typedef struct {
  gint64  id;
  char   *run_id;            /* required */
  int     step_index;
  char   *name;              /* required: a file name ("step-3-evidence.jpg") */
  char   *mime;
  GBytes *data;
  gint64  created_at;
  /* The file the store keeps it in as well, for a person or a report to
   * open (sight_store_artifact_path ()); set on read, ignored on write. */
  char   *path;
} SightArtifactRecord;

/* A recording of the run (a WebM video: the runner's sight-run-video.h) is
 * an artifact of this MIME type with no data: its file, like every
 * artifact's, is sight_store_artifact_path (), written there by the run. */
#define SIGHT_ARTIFACT_VIDEO_MIME "video/webm"

/* A whole run as the reports read it. Arrays are in order: steps by index,
 * the rest by insertion. */
typedef struct {
  SightRunRecord *run;
  GPtrArray      *steps;         /* SightStepRecord */
  GPtrArray      *observations;  /* SightObservationRecord */
  GPtrArray      *model_calls;   /* SightModelCallRecord */
  GPtrArray      *logs;          /* SightLogRecord */
  GPtrArray      *artifacts;     /* SightArtifactRecord */
} SightRunData;

void sight_session_record_free     (SightSessionRecord     *record);
void sight_run_record_free         (SightRunRecord         *record);
/* A deep copy of @record (its strings and notes). */
SightRunRecord *sight_run_record_copy (const SightRunRecord *record);
/* Whether @record is a run that could not be stored (sight_store_finish_run ()):
 * its explanation says so instead of its own outcome. */
gboolean        sight_run_record_is_unstored (const SightRunRecord *record);
void sight_step_record_free        (SightStepRecord        *record);
void sight_observation_record_free (SightObservationRecord *record);
void sight_model_call_record_free  (SightModelCallRecord   *record);
void sight_log_record_free         (SightLogRecord         *record);
void sight_artifact_record_free    (SightArtifactRecord    *record);
void sight_run_data_free           (SightRunData           *data);
/* The path of step @index's failure evidence (its screenshot artifact's
 * file), or NULL. */
const char *sight_run_data_get_step_evidence (const SightRunData *data,
                                              guint               index);
/* The run's recording (SIGHT_ARTIFACT_VIDEO_MIME), or NULL. */
const SightArtifactRecord *sight_run_data_find_video (const SightRunData *data);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightSessionRecord, sight_session_record_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightRunRecord, sight_run_record_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightStepRecord, sight_step_record_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightObservationRecord, sight_observation_record_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightModelCallRecord, sight_model_call_record_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightLogRecord, sight_log_record_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightArtifactRecord, sight_artifact_record_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightRunData, sight_run_data_free)

/* The schema version this build writes (PRAGMA user_version). */
#define SIGHT_STORE_SCHEMA_VERSION 3

#define SIGHT_TYPE_STORE (sight_store_get_type ())
G_DECLARE_FINAL_TYPE (SightStore, sight_store, SIGHT, STORE, GObject)

/* $SIGHTLINE_DATA_DIR/sightline.db, or
 * g_get_user_data_dir ()/sightline/sightline.db. */
char       *sight_store_default_path  (void);

/* Opens (creating when missing) the database at @path (NULL for the default
 * path): WAL, synchronous=FULL, a busy timeout, migrations to the current
 * schema, quick_check, and runs left open by a dead process marked
 * interrupted. A damaged file is renamed to "<path>.corrupt-<UTC time>" and
 * the call fails with ENVIRONMENT_UNAVAILABLE naming both paths; the next
 * open starts an empty database. All SQLite work then happens on the store's
 * own thread. */
SightStore *sight_store_new           (const char   *path,
                                       GError      **error);
void        sight_store_new_async     (const char          *path,
                                       GCancellable        *cancellable,
                                       GAsyncReadyCallback  callback,
                                       gpointer             user_data);
SightStore *sight_store_new_finish    (GAsyncResult  *result,
                                       GError       **error);
/* One store per process at the default path, opened on first use. */
SightStore *sight_store_get_default   (GError      **error);

const char *sight_store_get_path      (SightStore   *self);

/* Registers a secret value: from now on every string the store writes has it
 * replaced by "[secret]" (also its JSON- and URI-escaped forms), and a binary
 * blob containing it is refused with POLICY_DENIED. Values shorter than 4
 * bytes are ignored. The value itself is kept in memory only. */
void        sight_store_add_secret    (SightStore   *self,
                                       const char   *value);

/* Writes, in the order they happen. Each has a synchronous form (usable from
 * any thread but the store's own; it blocks until the write is durable) and
 * an _async form that completes in the caller's thread-default main context;
 * finish every write with sight_store_write_finish (). Writes are applied in
 * the order they were called, so a caller may fire several without waiting.
 * Run and session ids are chosen before the call returns. */
char       *sight_store_open_session  (SightStore               *self,
                                       const SightSessionRecord *session,
                                       GError                  **error);
gboolean    sight_store_end_session   (SightStore   *self,
                                       const char   *session_id,
                                       GError      **error);

/* Returns the run id (the record's, or a new run_… id). */
char       *sight_store_open_run      (SightStore           *self,
                                       const SightRunRecord *run,
                                       GError              **error);
char       *sight_store_open_run_async (SightStore           *self,
                                        const SightRunRecord *run,
                                        GCancellable         *cancellable,
                                        GAsyncReadyCallback   callback,
                                        gpointer              user_data);
/* Steps and their evidence are written asynchronously (finish each with
 * sight_store_write_finish()); tests have blocking forms in
 * tests/sight-store-sync.h. */
void        sight_store_add_step_async (SightStore            *self,
                                        const SightStepRecord *step,
                                        GCancellable          *cancellable,
                                        GAsyncReadyCallback    callback,
                                        gpointer               user_data);
/* Updates the step (run_id, index) with the outcome fields of @step:
 * verdict, code, explanation, usage, cache, budget, model_calls, actions,
 * target and finished_at (now when 0), and instruction, label and options when
 * given (written again once the step found a value to be a secret). */
void        sight_store_finish_step_async (SightStore            *self,
                                           const SightStepRecord *step,
                                           GCancellable          *cancellable,
                                           GAsyncReadyCallback    callback,
                                           gpointer               user_data);
void        sight_store_add_observation_async (SightStore                   *self,
                                               const SightObservationRecord *observation,
                                               GCancellable                 *cancellable,
                                               GAsyncReadyCallback           callback,
                                               gpointer                      user_data);
void        sight_store_add_model_call_async (SightStore                 *self,
                                              const SightModelCallRecord *call,
                                              GCancellable               *cancellable,
                                              GAsyncReadyCallback         callback,
                                              gpointer                    user_data);
void        sight_store_add_log_async (SightStore           *self,
                                       const SightLogRecord *log,
                                       GCancellable         *cancellable,
                                       GAsyncReadyCallback   callback,
                                       gpointer              user_data);
/* Every artifact is the file sight_store_artifact_path () names,
 * "artifacts/RUN/NAME" next to the database, and that is its path on read.
 * One with data (a failure's evidence screenshot) is kept in the database
 * too and, once its row is written, as that file, written to a temporary
 * name and renamed. One without data (a run's video) is a file the run
 * wrote there itself: missing, it fails with ENVIRONMENT_UNAVAILABLE. A
 * @name that is not a plain file name fails with INVALID_ARGUMENT. */
void        sight_store_add_artifact_async (SightStore                *self,
                                            const SightArtifactRecord *artifact,
                                            GCancellable              *cancellable,
                                            GAsyncReadyCallback        callback,
                                            gpointer                   user_data);
/* Where artifact @name of run @run_id is kept as a file; NULL when @name is
 * not a plain file name (empty, ".", "..", or with a slash). */
char       *sight_store_artifact_path (SightStore   *self,
                                       const char   *run_id,
                                       const char   *name);
/* Sets the run's outcome: verdict, code, explanation, final_url, answer,
 * notes and finished_at (now when 0) from @run (id required). Steps still
 * running are marked interrupted.
 *
 * When any write of the run failed (a full disk, an I/O error), the run is
 * not what happened: it is stored as verdict error, ENVIRONMENT_UNAVAILABLE,
 * "The run could not be stored: …", this call fails with that error, and
 * every read of the run in this process says so even if the database could
 * not be written. */
gboolean    sight_store_finish_run    (SightStore           *self,
                                       const SightRunRecord *run,
                                       GError              **error);
void        sight_store_finish_run_async (SightStore           *self,
                                          const SightRunRecord *run,
                                          GCancellable         *cancellable,
                                          GAsyncReadyCallback   callback,
                                          gpointer              user_data);
gboolean    sight_store_write_finish  (SightStore    *self,
                                       GAsyncResult  *result,
                                       GError       **error);

/* Reads. list_runs returns the newest first (SightRunRecord with step
 * counts, not token totals); @verdict_filter NULL for all. */
GPtrArray  *sight_store_list_runs     (SightStore   *self,
                                       guint         limit,
                                       const char   *verdict_filter,
                                       GError      **error);
void        sight_store_list_runs_async (SightStore          *self,
                                         guint                limit,
                                         const char          *verdict_filter,
                                         GCancellable        *cancellable,
                                         GAsyncReadyCallback  callback,
                                         gpointer             user_data);
GPtrArray  *sight_store_list_runs_finish (SightStore    *self,
                                          GAsyncResult  *result,
                                          GError       **error);
/* A whole run with totals; INVALID_ARGUMENT "not found" for an unknown id. */
SightRunData *sight_store_load_run    (SightStore   *self,
                                       const char   *run_id,
                                       GError      **error);
void        sight_store_load_run_async (SightStore          *self,
                                        const char          *run_id,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data);
SightRunData *sight_store_load_run_finish (SightStore    *self,
                                           GAsyncResult  *result,
                                           GError       **error);
GPtrArray  *sight_store_list_sessions (SightStore   *self,
                                       guint         limit,
                                       GError      **error);

/* PRAGMA integrity_check: TRUE when it says "ok". */
gboolean    sight_store_check_integrity (SightStore  *self,
                                         GError     **error);

G_END_DECLS
