/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-step-options.h"

G_BEGIN_DECLS

/* A test file (*.sightline.json) as DESIGN.md "Test files" gives its shape:
 * name, url, agent, timeout and steps, each step one of do / act / assert /
 * waitFor / extract with that method's options. */

/* A step's kind is its index in sight_step_kind_get_names(): the direct step,
 * then the agent steps, SightStepKind's values one up. */
typedef enum {
  SIGHT_TEST_STEP_DO,
  SIGHT_TEST_STEP_ACT = SIGHT_STEP_ACT + 1,
  SIGHT_TEST_STEP_ASSERT = SIGHT_STEP_ASSERT + 1,
  SIGHT_TEST_STEP_WAIT_FOR = SIGHT_STEP_WAIT_FOR + 1,
  SIGHT_TEST_STEP_EXTRACT = SIGHT_STEP_EXTRACT + 1,
} SightTestStepKind;

typedef struct {
  SightTestStepKind  kind;
  char              *instruction;  /* the text of do / act / … */
  JsonObject        *options;      /* every other member of the step */
  guint              line;         /* 1-based, where the step starts; 0 unknown */
} SightTestStep;

typedef struct {
  char       *path;
  char       *name;
  char       *url;                 /* absolute, or a path ("/login") that the
                                    * suite's base URL resolves; NULL: none */
  char       *agent;
  gint64      timeout_ms;          /* 0: the project's default */
  GPtrArray  *steps;               /* SightTestStep */
  JsonNode   *root;                /* the whole file, for export and the app */
} SightTestFile;

const char    *sight_test_step_kind_to_string (SightTestStepKind kind);

/* Loads @path. A syntax error names the line and column; a shape error
 * names the step (1-based) and what is wrong; both are INVALID_ARGUMENT. */
SightTestFile *sight_test_file_load    (const char     *path,
                                        GError        **error);
SightTestFile *sight_test_file_parse   (const char     *path,
                                        const char     *text,
                                        gssize          length,
                                        GError        **error);
void           sight_test_file_free    (SightTestFile  *file);

/* Writes @file's root back to its path (temporary name, then rename). */
gboolean       sight_test_file_save    (SightTestFile  *file,
                                        GError        **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightTestFile, sight_test_file_free)

G_END_DECLS
