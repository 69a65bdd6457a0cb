/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The benchmarks' 20-action flow on the bundled demo site, from /signup: sign
 * up in three steps with a detour back, sign in, add two projects, open
 * pricing, choose Team. Each entry is a direct step. */
#pragma once

#include "sight-demo-site.h"

#define SIGHT_BENCH_FLOW_START "signup"

static const char *const sight_bench_flow[] = {
  "type \"Ada Lovelace\" into Full name",
  "type \"ada@example.test\" into Work email",
  "click Continue",
  "type \"Analytical Engines\" into Workspace name",
  "select \"6–20 people\" in Team size",
  "select \"Enterprise\" in Plan",
  "check I accept the terms of service",
  "click Continue",
  "click Back",
  "select \"Starter\" in Plan",
  "click Continue",
  "click \"Create workspace\"",
  "click the 2nd \"Sign in\" link",
  "type \"" SIGHT_DEMO_SITE_EMAIL "\" into Email",
  "type \"" SIGHT_DEMO_SITE_PASSWORD "\" into Password",
  "click the \"Sign in\" button",
  "click \"Add project\"",
  "click \"Add project\"",
  "click the Pricing link",
  "click \"Choose Team\"",
};
