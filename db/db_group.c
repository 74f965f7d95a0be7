/* db_group: many callers' transaction bodies in one transaction (db.h,
 * db_group_run), the same on both engines.
 *
 * Why: every write of aquiferd queues on db.c's one writer mutex, and each
 * commit costs a log flush (PostgreSQL's WAL flush under the mutex; on
 * SQLite a share of a group fsync). The reconciler's visits (a generation,
 * then the finish of what a node applied) and the agents' status reports
 * were each their own transaction: at 1,000 nodes they queued behind the
 * creates and one another (bench/sim/REPORT.md). Here a caller queues its
 * body; the first caller that finds no group running leads one: it opens
 * a transaction on its own connection (waiting for the writer mutex while
 * more bodies queue), runs the queued bodies in arrival order, taking
 * newcomers too, until DB_GROUP_MAX bodies or DB_GROUP_BUDGET_NS of
 * running, commits once, and wakes every caller whose body it ran. No timer:
 * a group forms only while something else holds the writer, so an idle
 * server adds no wait. A body that fails, or a commit that fails (on
 * PostgreSQL a conflict with another replica), rolls the group back, and
 * then each of its bodies runs again alone in its own transaction, so
 * every caller gets its own body's result and one failure undoes no other
 * caller's writes. */
#include "db/db_engine.h"

#include <pthread.h>
#include <time.h>

/* A queued body; lives on its caller's stack until done. */
struct dg_item {
	db_group_fn fn;
	void *arg;
	int rc;
	bool done;
	struct dg_item *next;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct dg_item *head, **tail;
	bool leading;
	size_t max;         /* bodies a group at most (db_group_limits) */
	uint64_t budget_ns; /* no more bodies taken once a group ran this long */
	struct db_group_stats st;
} dg = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .max = DB_GROUP_MAX,
	 .budget_ns = DB_GROUP_BUDGET_NS };

static uint64_t dg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The next queued body for a group that has run n since t0, or NULL when
 * the queue is empty or the group is full. Under dg.mu. */
static struct dg_item *dg_take(size_t n, uint64_t t0)
{
	struct dg_item *it = dg.head;

	if (!it || n >= dg.max || (n > 0 && dg_now_ns() - t0 >= dg.budget_ns))
		return NULL;
	dg.head = it->next;
	if (!dg.head)
		dg.tail = &dg.head;
	dg.st.queued--;
	it->next = NULL;
	return it;
}

/* One body alone in its own transaction. */
static int dg_alone(struct db *db, struct dg_item *it)
{
	int rc;

	if ((rc = db_begin(db)) == AQ_OK && (rc = it->fn(db, it->arg)) == AQ_OK)
		rc = db_commit(db);
	db_rollback(db);
	return rc;
}

/* Take me out of the queue, failed with rc. Under dg.mu. */
static void dg_fail_own(struct dg_item *me, int rc)
{
	struct dg_item **pp;

	for (pp = &dg.head; *pp && *pp != me; pp = &(*pp)->next)
		;
	if (!*pp)
		return; /* already taken */
	*pp = me->next;
	if (dg.tail == &me->next)
		dg.tail = pp;
	dg.st.queued--;
	me->rc = rc;
	me->done = true;
}

/* Lead one group on db, the connection of me's caller (dg.leading set by
 * the caller, dg.mu not held). */
static void dg_lead(struct db *db, struct dg_item *me)
{
	struct dg_item *first = NULL, **last = &first, *it;
	size_t n = 0;
	uint64_t t0;
	int rc;

	/* the writer mutex: bodies queue meanwhile. A begin that fails is
	 * this connection's trouble: only its own caller's body fails, the
	 * others wait for the next leader */
	if ((rc = db_begin(db)) != AQ_OK) {
		pthread_mutex_lock(&dg.mu);
		dg_fail_own(me, rc);
		pthread_mutex_unlock(&dg.mu);
		return;
	}
	t0 = dg_now_ns();
	for (;;) {
		pthread_mutex_lock(&dg.mu);
		it = dg_take(n, t0);
		pthread_mutex_unlock(&dg.mu);
		if (!it)
			break;
		*last = it;
		last = &it->next;
		n++;
		if ((rc = it->fn(db, it->arg)) != AQ_OK)
			break; /* the group is lost: the rest run alone below */
	}
	if (rc == AQ_OK && n > 0)
		rc = db_commit(db);
	db_rollback(db);
	if (rc == AQ_OK) {
		for (it = first; it; it = it->next)
			it->rc = AQ_OK;
	} else {
		for (it = first; it; it = it->next)
			it->rc = n == 1 ? rc : dg_alone(db, it);
	}
	pthread_mutex_lock(&dg.mu);
	if (n > 0) {
		dg.st.groups++;
		dg.st.items += n;
		if (rc != AQ_OK && n > 1)
			dg.st.alone += n;
	}
	for (it = first; it; it = it->next)
		it->done = true;
	pthread_cond_broadcast(&dg.cv);
	pthread_mutex_unlock(&dg.mu);
}

int db_group_run(struct db *db, db_group_fn fn, void *arg)
{
	struct dg_item me = { .fn = fn, .arg = arg, .rc = AQ_EIO };

	if (!db || !fn || db->in_tx)
		return AQ_EINVAL; /* the leader would wait for its own writer mutex */
	pthread_mutex_lock(&dg.mu);
	if (!dg.tail)
		dg.tail = &dg.head;
	*dg.tail = &me;
	dg.tail = &me.next;
	dg.st.queued++;
	while (!me.done) {
		if (dg.leading) {
			pthread_cond_wait(&dg.cv, &dg.mu);
			continue;
		}
		dg.leading = true;
		pthread_mutex_unlock(&dg.mu);
		dg_lead(db, &me);
		pthread_mutex_lock(&dg.mu);
		dg.leading = false;
		pthread_cond_broadcast(&dg.cv); /* a waiter whose body is left leads next */
	}
	pthread_mutex_unlock(&dg.mu);
	return me.rc;
}

void db_group_stats(struct db_group_stats *st)
{
	pthread_mutex_lock(&dg.mu);
	*st = dg.st;
	pthread_mutex_unlock(&dg.mu);
}

void db_group_limits(size_t max, uint64_t budget_ns)
{
	pthread_mutex_lock(&dg.mu);
	dg.max = max >= 1 && max <= DB_GROUP_MAX ? max : DB_GROUP_MAX;
	dg.budget_ns = budget_ns ? budget_ns : DB_GROUP_BUDGET_NS;
	pthread_mutex_unlock(&dg.mu);
}
