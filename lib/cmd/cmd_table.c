/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The command table: one row per command, as Redis's command table has.
 * A row says the command's name, the syntax lib/proto parses it with and
 * how many tokens its line may have (struct proto_word), the function that
 * runs it, and where it is served (CMD_F_*). The parser's words
 * (cmd_grammar), dispatch (cmd_conn.c), the UDP and admin-port rules and the
 * names in stats and logs all read this table. docs/architecture.md,
 * "Adding a command", shows a row.
 */
#include <pthread.h>
#include <string.h>

#include "cmd/cmd_private.h"

/* A row. TMIN and TMAX count memcached's tokens, the terminal one
 * included ("get k" is 3); TMAX 0: no limit. */
#define ROW(CMD, NAME, SYNTAX, TMIN, TMAX, EXEC, FLAGS)                            \
	[PROTO_CMD_##CMD] = {                                                      \
		.word = { .name = NAME,                                            \
			  .len = sizeof(NAME) - 1,                                 \
			  .cmd = PROTO_CMD_##CMD,                                  \
			  .syntax = PROTO_SYN_##SYNTAX,                            \
			  .tokens_min = TMIN,                                      \
			  .tokens_max = TMAX },                                    \
		.exec = EXEC,                                                      \
		.flags = FLAGS,                                                    \
	}

#define UDP CMD_F_UDP
#define ADMIN CMD_F_ADMIN
#define ADMIN_ALL CMD_F_ADMIN_ALL
#define NOREPLY CMD_F_NOREPLY
#define WRITE CMD_F_WRITE
#define OWN_ERROR CMD_F_OWN_ERROR

/* A duplicate row does not build (-Woverride-init is an error); a missing
 * one fails the unit test tests/unit/cmd/test_cmd.cc. */
const struct cmd_def cmd_table[PROTO_CMD_MAX] = {
	/* not command words: an empty slot and the parse error */
	ROW(NONE,	    "none",	       NONE,	      0, 0, NULL, 0),
	ROW(ERROR,	    "error",	       NONE,	      0, 0, NULL, ADMIN),
	/* retrieval */
	ROW(GET,	    "get",	       GET,	      3, 0, cmd_exec_get, UDP),
	ROW(GETS,	    "gets",	       GET,	      3, 0, cmd_exec_get, UDP),
	/* gat and gats change the TTL: not over UDP, where a forged source
	 * could expire any key (gat -1) */
	ROW(GAT,	    "gat",	       GAT,	      3, 0, cmd_exec_get, 0),
	ROW(GATS,	    "gats",	       GAT,	      3, 0, cmd_exec_get, 0),
	/* storage */
	ROW(SET,	    "set",	       STORE,	      6, 7, cmd_exec_store, NOREPLY | WRITE),
	ROW(ADD,	    "add",	       STORE,	      6, 7, cmd_exec_store, NOREPLY | WRITE),
	ROW(REPLACE,	    "replace",	       STORE,	      6, 7, cmd_exec_store, NOREPLY | WRITE),
	ROW(APPEND,	    "append",	       STORE,	      6, 7, cmd_exec_store, NOREPLY | WRITE),
	ROW(PREPEND,	    "prepend",	       STORE,	      6, 7, cmd_exec_store, NOREPLY | WRITE),
	ROW(CAS,	    "cas",	       CAS,	      7, 8, cmd_exec_store, NOREPLY | WRITE),
	/* the other classic commands */
	ROW(DELETE,	    "delete",	       DELETE,	      3, 5, cmd_exec_delete, NOREPLY | WRITE),
	ROW(INCR,	    "incr",	       ARITH,	      4, 5, cmd_exec_arith, NOREPLY | WRITE),
	ROW(DECR,	    "decr",	       ARITH,	      4, 5, cmd_exec_arith, NOREPLY | WRITE),
	ROW(TOUCH,	    "touch",	       TOUCH,	      4, 5, cmd_exec_touch, NOREPLY | WRITE),
	ROW(FLUSH_ALL,	    "flush_all",       FLUSH_ALL,     2, 4, cmd_exec_flush_all,
	    NOREPLY | WRITE | OWN_ERROR),
	ROW(VERSION,	    "version",	       BARE,	      2, 0, cmd_exec_version, UDP | ADMIN),
	ROW(VERBOSITY,	    "verbosity",       VERBOSITY,     3, 4, cmd_exec_verbosity,
	    ADMIN_ALL | NOREPLY),
	ROW(QUIT,	    "quit",	       BARE,	      2, 0, cmd_exec_quit, ADMIN),
	ROW(STATS,	    "stats",	       STATS,	      2, 0, cmd_exec_stats, ADMIN),
	ROW(SHUTDOWN,	    "shutdown",	       SHUTDOWN,      2, 0, cmd_exec_shutdown,
	    ADMIN_ALL | OWN_ERROR),
	/* memcached's administration of its slab allocator and LRU crawler:
	 * they change memory (cache_memlimit evicts) or list keys (metadump),
	 * so the admin port serves them only with --admin-commands all */
	ROW(CACHE_MEMLIMIT, "cache_memlimit",  CACHE_MEMLIMIT, 2, 0, cmd_exec_cache_memlimit,
	    ADMIN_ALL | NOREPLY),
	ROW(SLABS,	    "slabs",	       SLABS,	      2, 0, cmd_exec_slabs, ADMIN_ALL | NOREPLY),
	ROW(LRU_CRAWLER,    "lru_crawler",     LRU_CRAWLER,   2, 0, cmd_exec_lru_crawler,
	    ADMIN_ALL),
	/* meta commands: their own token checks (proto_meta.c) */
	/* mg over UDP only without the flags that change an item
	 * (cmd_conn.c, udp_servable) */
	ROW(MG,		    "mg",	       META,	      2, 0, cmd_exec_mg, UDP),
	ROW(MS,		    "ms",	       META,	      2, 0, cmd_exec_ms, WRITE),
	ROW(MD,		    "md",	       META,	      2, 0, cmd_exec_md, WRITE),
	ROW(MA,		    "ma",	       META,	      2, 0, cmd_exec_ma, WRITE),
	ROW(MN,		    "mn",	       BARE,	      2, 0, cmd_exec_mn, UDP),
	ROW(ME,		    "me",	       ME,	      2, 0, cmd_exec_me, 0),
};

_Static_assert(sizeof(cmd_table) / sizeof(cmd_table[0]) == PROTO_CMD_MAX,
	       "one row per enum proto_cmd");

const char *
cmd_name(enum proto_cmd cmd)
{
	if ((unsigned)cmd >= PROTO_CMD_MAX || !cmd_table[cmd].word.name)
		return "unknown";
	return cmd_table[cmd].word.name;
}

unsigned
cmd_flags(enum proto_cmd cmd)
{
	return (unsigned)cmd < PROTO_CMD_MAX ? cmd_table[cmd].flags : 0;
}

static struct proto_grammar grammar;
static pthread_once_t grammar_once = PTHREAD_ONCE_INIT;

static void
grammar_build(void)
{
	for (unsigned i = 0; i < PROTO_CMD_MAX; i++)
		if (cmd_table[i].word.syntax != PROTO_SYN_NONE)
			proto_grammar_add(&grammar, &cmd_table[i].word);
}

const struct proto_grammar *
cmd_grammar(void)
{
	pthread_once(&grammar_once, grammar_build);
	return &grammar;
}
