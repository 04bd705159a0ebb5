/*
** prof_cmds.h — the commands profile/ gives `inspect`'s command table
** (inspect/inspect.c): the one thing inspect/ takes from profile/.  They
** read traces, profile databases and sessions through the reader toolkit
** (reader/rd_int.h) and return an exit code (RD_EXIT_*).
*/
#ifndef PROF_CMDS_H
#define PROF_CMDS_H

#include "rd_int.h"

/* "prof_cmd.c" */
int prof_cmd_profile(int argc, char **argv, const struct rd_opts *o);
int prof_cmd_analyse(int argc, char **argv, const struct rd_opts *o);
/* "prof_report.c" */
int prof_cmd_report(int argc, char **argv, const struct rd_opts *o);
/* "prof_live.c": what main sets rd_live_fns to */
extern const struct rd_live_fns prof_live_fns;

#endif /* PROF_CMDS_H */
