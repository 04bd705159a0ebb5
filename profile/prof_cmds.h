/*
** prof_cmds.h — the commands profile/ gives `inspect`'s command table
** (inspect/inspect.c): the one thing inspect/ takes from profile/.  They
** read traces, profile databases and sessions through the reader toolkit
** (reader/reader_int.h) and return an exit code (INSP_EXIT_*).
*/
#ifndef PROF_CMDS_H
#define PROF_CMDS_H

#include "reader_int.h"

/* "prof_cmd.c" */
int insp_cmd_profile(int argc, char **argv, const struct insp_opts *o);
int insp_cmd_analyse(int argc, char **argv, const struct insp_opts *o);
/* "prof_report.c" */
int insp_cmd_report(int argc, char **argv, const struct insp_opts *o);
int insp_cmd_export(int argc, char **argv, const struct insp_opts *o);
int insp_cmd_html(int argc, char **argv, const struct insp_opts *o);
/* "prof_live.c": what main sets insp_live_fns to */
extern const struct insp_live_fns prof_live_fns;

#endif /* PROF_CMDS_H */
