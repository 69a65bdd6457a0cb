/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Each is defined in app/sight-cmd-<name>.c and listed in sight-cli.c. */
int sight_cmd_version (int argc, char **argv);
int sight_cmd_scrape (int argc, char **argv);
int sight_cmd_crawl (int argc, char **argv);
int sight_cmd_pdf (int argc, char **argv);
int sight_cmd_smoke (int argc, char **argv);
int sight_cmd_task (int argc, char **argv);
int sight_cmd_skills (int argc, char **argv);
int sight_cmd_screenshot (int argc, char **argv);
int sight_cmd_demo_site (int argc, char **argv);
int sight_cmd_export (int argc, char **argv);
int sight_cmd_mcp (int argc, char **argv);
int sight_cmd_serve (int argc, char **argv);
int sight_cmd_snapshot (int argc, char **argv);
int sight_cmd_act (int argc, char **argv);
int sight_cmd_assert (int argc, char **argv);
int sight_cmd_wait_for (int argc, char **argv);
int sight_cmd_extract (int argc, char **argv);
int sight_cmd_runs (int argc, char **argv);
int sight_cmd_report (int argc, char **argv);
int sight_cmd_run (int argc, char **argv);
int sight_cmd_merge_reports (int argc, char **argv);

G_END_DECLS
