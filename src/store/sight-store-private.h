/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <sqlite3.h>

#include "sight-store.h"

G_BEGIN_DECLS

/* Applies migrations 1..@target_version to an open database (in one
 * transaction each). Exposed for tests that build a database of an older
 * schema version. */
gboolean _sight_store_migrate (sqlite3  *db,
                               int       target_version,
                               GError  **error);

/* Lists newest runs like sight_store_list_runs () but without using the
 * started_at index: the baseline of bench/store. */
GPtrArray *_sight_store_list_runs_unindexed (SightStore  *self,
                                             guint        limit,
                                             GError     **error);

G_END_DECLS
