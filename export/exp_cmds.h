/*
** exp_cmds.h — the commands export/ gives `inspect`'s command table
** (inspect/inspect.c).  They return an exit code (RD_EXIT_*).
*/
#ifndef EXP_CMDS_H
#define EXP_CMDS_H

#include "rd_int.h"

/* "exp_cmd.c" */
int exp_cmd_export(int argc, char **argv, const struct rd_opts *o);
/* "exp_html.c" */
int exp_cmd_html(int argc, char **argv, const struct rd_opts *o);

#endif /* EXP_CMDS_H */
