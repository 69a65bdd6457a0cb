/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-agent.h"
#include "sight-project.h"
#include "sight-step-result.h"
#include "sight-store.h"
#include "sight-test-file.h"

G_BEGIN_DECLS

/* A suite: test files run headless, several at once in one process.
 *
 * Arguments (the command line's kebab-case flags, camelCase here):
 *   workers   1-16, default 1: how many tests run at once, each in a page of
 *             its own (its own cookies and storage)
 *   shard     "I/N" (1 <= I <= N <= 1000): only the I-th of N contiguous,
 *             equal shares of the selected tests
 *   retries   0-10, default 0: a failed test is run again up to this many
 *             times; one that passes on a retry is "flaky"
 *   grep      a regular expression (PCRE, at most 500 characters); only the
 *             tests whose name or file name it matches run
 *   baseUrl   an http(s) URL that a test file's relative "url" ("/login")
 *             resolves against
 *   project   a project file (sightline.json) to use for every test instead
 *             of the one found next to or above each test file
 *
 * Each attempt of each test is a run in @store (kind "test"): a "load" step,
 * then one step per step of the file, each with the screenshot and tree of
 * the page after it, then the page's console and failed requests. The first
 * step that fails stops the test; the later ones are recorded as skipped.
 *
 * The result (also what `sightline run --json` prints and what
 * `merge-reports` reads):
 *   { "kind": "sightline-suite", "version": 1, "verdict": "pass"|"fail"|"error",
 *     "exitStatus", "startedAt", "finishedAt", "ms", "workers", "retries",
 *     "shard"?: { "index", "total" }, "grep"?, "selected", "total",
 *     "counts": { "tests", "passed", "flaky", "failed", "errors" },
 *     "tests": [ { "file", "name", "url", "verdict": "pass"|"flaky"|"fail"|"error",
 *                  "code"?, "explanation"?, "failedStep"?, "screenshot"? (the last
 *                  attempt's failure evidence, a file path), "ms",
 *                  "attempts": [ { "runId", "verdict", "code"?, "explanation"?,
 *                                  "ms", "report" } ] } ] }
 * where "report" is the run's report (sight_report_to_json). */

/* Called in the caller's main context as each test ends (after its last
 * attempt), with that test's entry of the result's "tests". */
typedef void (*SightSuiteProgressFunc) (JsonObject *test,
                                        gpointer    user_data);

/* @files (SightTestFile) must stay alive until the run finishes. */
void        sight_suite_run_async      (SightStore             *store,
                                        GPtrArray              *files,
                                        JsonObject             *args,
                                        SightSuiteProgressFunc  progress,
                                        gpointer                progress_data,
                                        GCancellable           *cancellable,
                                        GAsyncReadyCallback     callback,
                                        gpointer                user_data);
JsonNode   *sight_suite_run_finish     (GAsyncResult        *result,
                                        GError             **error);

/* How step @index of a test run on its own went (-1: loading the start
 * page), as it ends; a step that ended without running (the time ran out,
 * it did not validate) gets a result that carries the error. Skipped
 * steps are not reported. */
typedef void (*SightTestStepFunc) (int              index,
                                   SightStepResult *result,
                                   gpointer         user_data);

/* Runs one test, @file (alive until the run finishes), with exactly the
 * suite's rules: one attempt, the start page @url (NULL: about:blank)
 * loaded, each step through the step executor within what is left of the
 * test's timeout (the file's, else @project's: a step the time did not
 * reach fails with STEP_TIMEOUT), the first failure stopping the test and
 * the rest skipped, all recorded as a run in @store. On @agent's page with
 * @agent (its provider, its signals) when given, else on a page of its own.
 * Finishes with the attempt as the suite's result lists it ({ "runId",
 * "verdict", "code"?, "explanation"?, "failedStep"?, "ms", "report" }). */
void        sight_test_run_async       (SightStore          *store,
                                        SightTestFile       *file,
                                        SightProject        *project,
                                        const char          *url,
                                        SightAgent          *agent,
                                        SightTestStepFunc    on_step,
                                        gpointer             on_step_data,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data);
JsonObject *sight_test_run_finish      (GAsyncResult        *result,
                                        GError             **error);

/* The one answer to "does this test need a model it does not have"
 * (spec/agent-api.txt: acquiring the fixture without a configured model
 * fails with MODEL_UNAVAILABLE). TRUE when every agent step (act, assert,
 * waitFor, extract) of @file has a model: @agent's provider when it has one,
 * else the model its agent in @project configures. An act whose trace the
 * project's trace cache holds replays with no model and needs none, and a
 * direct step (do) never does. FALSE with MODEL_UNAVAILABLE naming the first
 * step that needs a model and why none is there. A step whose options do not
 * validate is left to fail when it runs. */
gboolean    sight_test_check_model     (SightTestFile       *file,
                                        SightProject        *project,
                                        SightAgent          *agent,
                                        GError             **error);

/* Loads every test file (SightTestFile); a folder stands for the
 * *.sightline.json files under it, in name order. The first that does not
 * load fails the call with its error (a syntax error names the line and
 * column). */
GPtrArray  *sight_suite_load_files     (const char * const  *paths,
                                        GError             **error);

/* Combines the results of several shards (each a suite result as above)
 * into one: tests in shard order, counts and verdict recomputed. Fails with
 * INVALID_ARGUMENT naming the input that is not a suite result. */
JsonNode   *sight_suite_merge          (GPtrArray           *results,
                                        GError             **error);

/* The process exit status of DESIGN.md for a suite result: 0 when every
 * test passed (flaky ones included), 1 when one failed, else the status of
 * the first error's code (3 environment, 4 budget, 5 model, …). */
int         sight_suite_exit_status    (JsonObject          *result);

/* One line per test and a totals line, for a terminal. */
char       *sight_suite_text           (JsonObject          *result);
/* The line (or two, with the failure) of one test of a result. */
char       *sight_suite_test_text      (JsonObject          *test);
/* The totals line. */
char       *sight_suite_totals_text    (JsonObject          *result);

G_END_DECLS
