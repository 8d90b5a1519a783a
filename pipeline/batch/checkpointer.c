/* checkpointer.c — WAL checkpoints on a thread of their own (see
 * checkpointer.h). The thread sleeps on cond until pending or quit is set,
 * runs a pending checkpoint even after quit, and ends on quit with none
 * pending; mu guards both flags and the failure message. Its connection is
 * used by that thread only. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "checkpointer.h"
#include "storage/db.h"
#include "util/pp.h"
#include "util/strbuf.h"

struct checkpointer {
	struct db *db;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	bool pending, quit;
	char failed[512]; /* the first failure not yet taken, or "" */
};

static void *checkpointer_main(void *arg)
{
	struct checkpointer *c = arg;
	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (!c->pending && !c->quit)
			pthread_cond_wait(&c->cond, &c->mu);
		if (!c->pending)
			break; /* quit, nothing asked */
		c->pending = false;
		pthread_mutex_unlock(&c->mu);
		bool bad = db_checkpoint(c->db) != 0;
		pthread_mutex_lock(&c->mu);
		if (bad && !c->failed[0])
			snprintf(c->failed, sizeof(c->failed), "%s", db_errmsg(c->db));
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

struct checkpointer *checkpointer_start(const char *path, int busy_timeout_ms, struct strbuf *err)
{
	struct checkpointer *c = xcalloc(1, sizeof(*c));
	/* Its close must not checkpoint: the coordinator's own does. */
	c->db = db_open(path, DB_EXISTING | DB_NO_CHECKPOINT, busy_timeout_ms, err);
	if (!c->db) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cond, NULL);
	if (pthread_create(&c->thread, NULL, checkpointer_main, c)) {
		pp_err(err, PP_EIO, "cannot start the checkpoint thread");
		pthread_cond_destroy(&c->cond);
		pthread_mutex_destroy(&c->mu);
		db_close(c->db);
		free(c);
		return NULL;
	}
	return c;
}

void checkpointer_request(struct checkpointer *c)
{
	pthread_mutex_lock(&c->mu);
	c->pending = true;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->mu);
}

bool checkpointer_error(struct checkpointer *c, struct strbuf *msg)
{
	pthread_mutex_lock(&c->mu);
	bool failed = c->failed[0] != '\0';
	if (failed) {
		strbuf_addstr(msg, c->failed);
		c->failed[0] = '\0';
	}
	pthread_mutex_unlock(&c->mu);
	return failed;
}

bool checkpointer_stop(struct checkpointer *c, struct strbuf *msg)
{
	if (!c)
		return false;
	pthread_mutex_lock(&c->mu);
	c->quit = true;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->mu);
	pthread_join(c->thread, NULL);
	bool failed = checkpointer_error(c, msg);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->mu);
	db_close(c->db);
	free(c);
	return failed;
}
