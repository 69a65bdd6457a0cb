/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-step-undo"

#include "config.h"

#include "sight-step-undo.h"

typedef enum {
  COMMAND_INSERT,
  COMMAND_REMOVE,
  COMMAND_SET_TEXT,
  COMMAND_MOVE,
  COMMAND_MEMBER,
  COMMAND_GROUP,
} CommandKind;

typedef struct {
  CommandKind  kind;
  guint        index;      /* the step; MOVE: where it was */
  guint        to;         /* MOVE: where it went */
  JsonNode    *step;       /* INSERT, REMOVE: the step object */
  char        *member;     /* MEMBER: "name", "url" */
  char        *before;     /* SET_TEXT, MEMBER (NULL: absent) */
  char        *after;
  GPtrArray   *children;   /* GROUP: Command, in the order done */
} Command;

struct _SightStepUndo
{
  const SightStepUndoOps *ops;
  gpointer                model;
  GPtrArray              *done;      /* Command, oldest first */
  GPtrArray              *undone;    /* Command, the next to redo last */
  Command                *group;     /* open, or NULL */
  guint                   group_depth;
  /* The number of commands done when the model was saved; -1 when that
   * state can no longer be reached (it was undone, then something else was
   * done). */
  gint64                  clean;
};

static void
command_free (gpointer data)
{
  Command *command = data;

  g_clear_pointer (&command->step, json_node_unref);
  g_free (command->member);
  g_free (command->before);
  g_free (command->after);
  g_clear_pointer (&command->children, g_ptr_array_unref);
  g_free (command);
}

static Command *
command_new (CommandKind kind)
{
  Command *command = g_new0 (Command, 1);

  command->kind = kind;
  return command;
}

static void
apply (SightStepUndo *self,
       Command       *command,
       gboolean       undo)
{
  switch (command->kind)
    {
    case COMMAND_INSERT:
    case COMMAND_REMOVE:
      if ((command->kind == COMMAND_INSERT) != undo)
        self->ops->insert (self->model, command->index, command->step);
      else
        self->ops->remove (self->model, command->index);
      break;
    case COMMAND_SET_TEXT:
      self->ops->set_text (self->model, command->index, undo ? command->before : command->after);
      break;
    case COMMAND_MOVE:
      if (undo)
        self->ops->move (self->model, command->to, command->index);
      else
        self->ops->move (self->model, command->index, command->to);
      break;
    case COMMAND_MEMBER:
      self->ops->set_member (self->model, command->member,
                             undo ? command->before : command->after);
      break;
    case COMMAND_GROUP:
    default:
      for (guint i = 0; i < command->children->len; i++)
        apply (self,
               g_ptr_array_index (command->children,
                                  undo ? command->children->len - 1 - i : i),
               undo);
      break;
    }
}

SightStepUndo *
sight_step_undo_new (const SightStepUndoOps *ops,
                     gpointer                model)
{
  SightStepUndo *self;

  g_return_val_if_fail (ops != NULL, NULL);
  g_return_val_if_fail (ops->insert != NULL && ops->remove != NULL && ops->set_text != NULL &&
                        ops->move != NULL && ops->set_member != NULL, NULL);

  self = g_new0 (SightStepUndo, 1);
  self->ops = ops;
  self->model = model;
  self->done = g_ptr_array_new_with_free_func (command_free);
  self->undone = g_ptr_array_new_with_free_func (command_free);
  return self;
}

void
sight_step_undo_free (SightStepUndo *self)
{
  if (self == NULL)
    return;
  g_ptr_array_unref (self->done);
  g_ptr_array_unref (self->undone);
  g_clear_pointer (&self->group, command_free);
  g_free (self);
}

/* The command done last, where an edit may merge into it: not a saved
 * state (undo must stop there) and not across a group's edge. */
static Command *
mergeable_top (SightStepUndo *self)
{
  if (self->group != NULL)
    return self->group->children->len > 0
           ? g_ptr_array_index (self->group->children, self->group->children->len - 1) : NULL;
  if (self->done->len == 0 || self->clean == (gint64) self->done->len)
    return NULL;
  return g_ptr_array_index (self->done, self->done->len - 1);
}

/* An edit merged back to where it started is no edit. */
static void
drop_top_if_undone (SightStepUndo *self,
                    Command       *top)
{
  GPtrArray *commands = self->group != NULL ? self->group->children : self->done;

  if (g_strcmp0 (top->before, top->after) == 0 && commands->len > 0 &&
      g_ptr_array_index (commands, commands->len - 1) == top)
    g_ptr_array_remove_index (commands, commands->len - 1);
}

static void
push (SightStepUndo *self,
      Command       *command)
{
  if (self->group != NULL)
    {
      g_ptr_array_add (self->group->children, command);
      return;
    }
  /* What was undone cannot be redone after a new edit; the saved state may
   * have been among it. */
  if (self->undone->len > 0)
    {
      if (self->clean > (gint64) self->done->len)
        self->clean = -1;
      g_ptr_array_set_size (self->undone, 0);
    }
  g_ptr_array_add (self->done, command);
}

void
sight_step_undo_push_insert (SightStepUndo *self,
                             guint          index,
                             JsonNode      *step)
{
  Command *command;

  g_return_if_fail (self != NULL);
  g_return_if_fail (step != NULL);

  command = command_new (COMMAND_INSERT);
  command->index = index;
  command->step = json_node_copy (step);
  push (self, command);
}

void
sight_step_undo_push_remove (SightStepUndo *self,
                             guint          index,
                             JsonNode      *step)
{
  Command *command;

  g_return_if_fail (self != NULL);
  g_return_if_fail (step != NULL);

  command = command_new (COMMAND_REMOVE);
  command->index = index;
  command->step = json_node_copy (step);
  push (self, command);
}

void
sight_step_undo_push_set_text (SightStepUndo *self,
                               guint          index,
                               const char    *before,
                               const char    *after)
{
  Command *top, *command;

  g_return_if_fail (self != NULL);
  g_return_if_fail (before != NULL && after != NULL);

  top = mergeable_top (self);
  if (top != NULL && top->kind == COMMAND_SET_TEXT && top->index == index &&
      self->undone->len == 0)
    {
      g_free (top->after);
      top->after = g_strdup (after);
      drop_top_if_undone (self, top);
      return;
    }
  command = command_new (COMMAND_SET_TEXT);
  command->index = index;
  command->before = g_strdup (before);
  command->after = g_strdup (after);
  push (self, command);
}

void
sight_step_undo_push_move (SightStepUndo *self,
                           guint          from,
                           guint          to)
{
  Command *command;

  g_return_if_fail (self != NULL);

  command = command_new (COMMAND_MOVE);
  command->index = from;
  command->to = to;
  push (self, command);
}

void
sight_step_undo_push_member (SightStepUndo *self,
                             const char    *member,
                             const char    *before,
                             const char    *after)
{
  Command *top, *command;

  g_return_if_fail (self != NULL);
  g_return_if_fail (member != NULL);

  top = mergeable_top (self);
  if (top != NULL && top->kind == COMMAND_MEMBER && g_str_equal (top->member, member) &&
      self->undone->len == 0)
    {
      g_free (top->after);
      top->after = g_strdup (after);
      drop_top_if_undone (self, top);
      return;
    }
  command = command_new (COMMAND_MEMBER);
  command->member = g_strdup (member);
  command->before = g_strdup (before);
  command->after = g_strdup (after);
  push (self, command);
}

void
sight_step_undo_begin_group (SightStepUndo *self)
{
  g_return_if_fail (self != NULL);

  if (self->group_depth++ > 0)
    return;
  self->group = command_new (COMMAND_GROUP);
  self->group->children = g_ptr_array_new_with_free_func (command_free);
}

static void
close_group (SightStepUndo *self)
{
  Command *group = g_steal_pointer (&self->group);

  self->group_depth = 0;
  if (group == NULL)
    return;
  if (group->children->len == 0)
    command_free (group);
  else
    push (self, group);
}

void
sight_step_undo_end_group (SightStepUndo *self)
{
  g_return_if_fail (self != NULL);

  if (self->group_depth == 0 || --self->group_depth > 0)
    return;
  close_group (self);
}

gboolean
sight_step_undo_can_undo (SightStepUndo *self)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return self->done->len > 0 || (self->group != NULL && self->group->children->len > 0);
}

gboolean
sight_step_undo_can_redo (SightStepUndo *self)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return self->undone->len > 0 &&
         (self->group == NULL || self->group->children->len == 0);
}

gboolean
sight_step_undo_undo (SightStepUndo *self)
{
  Command *command;

  g_return_val_if_fail (self != NULL, FALSE);

  /* Undo in the middle of a recording takes back what it recorded so far,
   * as one; what it records next is a command of its own. */
  if (self->group != NULL && self->group->children->len > 0)
    {
      guint depth = self->group_depth;

      close_group (self);
      sight_step_undo_begin_group (self);
      self->group_depth = depth;
    }
  if (self->done->len == 0)
    return FALSE;
  command = g_ptr_array_steal_index (self->done, self->done->len - 1);
  apply (self, command, TRUE);
  g_ptr_array_add (self->undone, command);
  return TRUE;
}

gboolean
sight_step_undo_redo (SightStepUndo *self)
{
  Command *command;

  g_return_val_if_fail (self != NULL, FALSE);

  if (!sight_step_undo_can_redo (self))
    return FALSE;
  command = g_ptr_array_steal_index (self->undone, self->undone->len - 1);
  apply (self, command, FALSE);
  g_ptr_array_add (self->done, command);
  return TRUE;
}

void
sight_step_undo_clear (SightStepUndo *self)
{
  g_return_if_fail (self != NULL);

  g_ptr_array_set_size (self->done, 0);
  g_ptr_array_set_size (self->undone, 0);
  if (self->group != NULL)
    g_ptr_array_set_size (self->group->children, 0);
  self->clean = 0;
}

void
sight_step_undo_mark_clean (SightStepUndo *self)
{
  g_return_if_fail (self != NULL);

  /* Saved in the middle of a recording: what it recorded so far is one
   * command, before the saved state. */
  if (self->group != NULL && self->group->children->len > 0)
    {
      guint depth = self->group_depth;

      close_group (self);
      sight_step_undo_begin_group (self);
      self->group_depth = depth;
    }
  self->clean = self->done->len;
}

gboolean
sight_step_undo_is_clean (SightStepUndo *self)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return self->clean == (gint64) self->done->len &&
         (self->group == NULL || self->group->children->len == 0);
}
