/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-step-context.h"

G_BEGIN_DECLS

/* A custom executor (docs/executor.md): the program an agent's "executor"
 * names, started for one step and spoken to in JSON-RPC 2.0 over its stdin and
 * stdout, one message per line. Sightline sends `step/run`; the executor calls
 * back `page/observe`, `page/perform`, `page/tapAt`, `page/screenshot`,
 * `budget/modelCall` and ends with `step/finish`.
 *
 * What stays Sightline's: the budget (committed actions and model calls, from
 * the step's limits), the deadline (STEP_TIMEOUT, the process killed), taint
 * (no screenshot once a secret was filled: PIXEL_TAINTED), secrets (the
 * executor gets params as the model does and fills a Secret by its param
 * through the one secret fill; every message it receives is redacted) and the
 * step's result and progress (the context's hooks).
 *
 * The executor runs in a process group of its own with a small environment
 * (never Sightline's); the whole group is killed when the step ends, however
 * it ends, and the step ends only once the executor was reaped. An executor
 * that cannot be started or exits before step/finish is ENVIRONMENT_UNAVAILABLE;
 * one that writes what is not JSON-RPC 2.0 (or a line over 1 MiB) is
 * MODEL_OUTPUT_INVALID. */

/* The executor's body of a step (SightStepBody): the outcome goes into @ctx's
 * result. */
void      sight_external_executor_run_async  (SightStepContext    *ctx,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
void      sight_external_executor_run_finish (SightStepContext    *ctx,
                                              GAsyncResult        *result);

G_END_DECLS
