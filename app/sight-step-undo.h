/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The undo stack of the step list: every edit of a test (a step added,
 * edited, moved or deleted, the name or start address changed) is a command
 * that knows how to do and undo itself over the list's model. Commands
 * pushed between sight_step_undo_begin_group() and _end_group() (a
 * recording session) undo and redo as one. The stack remembers where the
 * test was saved: sight_step_undo_is_clean() is TRUE there, so undoing back
 * to the saved state clears the unsaved mark. */

/* What a command does to the model; the step list implements them without
 * recording anything. */
typedef struct {
  void (*insert)     (gpointer    model,
                      guint       index,
                      JsonNode   *step);
  void (*remove)     (gpointer    model,
                      guint       index);
  void (*set_text)   (gpointer    model,
                      guint       index,
                      const char *text);
  void (*move)       (gpointer    model,
                      guint       from,
                      guint       to);
  /* A member of the test itself ("name", "url"); NULL @value removes it. */
  void (*set_member) (gpointer    model,
                      const char *member,
                      const char *value);
} SightStepUndoOps;

typedef struct _SightStepUndo SightStepUndo;

SightStepUndo *sight_step_undo_new          (const SightStepUndoOps *ops,
                                             gpointer                model);
void           sight_step_undo_free         (SightStepUndo          *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightStepUndo, sight_step_undo_free)

/* Each of these records an edit the model has just made. */
void           sight_step_undo_push_insert  (SightStepUndo *self,
                                             guint          index,
                                             JsonNode      *step);
void           sight_step_undo_push_remove  (SightStepUndo *self,
                                             guint          index,
                                             JsonNode      *step);
/* Consecutive edits of one step's text are one command (typing a word is
 * one undo). */
void           sight_step_undo_push_set_text (SightStepUndo *self,
                                              guint          index,
                                              const char    *before,
                                              const char    *after);
void           sight_step_undo_push_move    (SightStepUndo *self,
                                             guint          from,
                                             guint          to);
/* Consecutive edits of one member are one command, as for text. */
void           sight_step_undo_push_member  (SightStepUndo *self,
                                             const char    *member,
                                             const char    *before,
                                             const char    *after);

void           sight_step_undo_begin_group  (SightStepUndo *self);
void           sight_step_undo_end_group    (SightStepUndo *self);

gboolean       sight_step_undo_can_undo     (SightStepUndo *self);
gboolean       sight_step_undo_can_redo     (SightStepUndo *self);
/* Undoes (redoes) the last command done (undone) through the ops; FALSE
 * when there is none. */
gboolean       sight_step_undo_undo         (SightStepUndo *self);
gboolean       sight_step_undo_redo         (SightStepUndo *self);

/* Forgets every command (a test opened or started anew); clean. */
void           sight_step_undo_clear        (SightStepUndo *self);
/* The model is as saved now. */
void           sight_step_undo_mark_clean   (SightStepUndo *self);
gboolean       sight_step_undo_is_clean     (SightStepUndo *self);

G_END_DECLS
