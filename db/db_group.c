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
 * caller's writes.
 *
 * Volume creates (DB_GROUP_API) are bodies too: on PostgreSQL each commit
 * is a WAL flush and a round trip under the writer mutex, so clients'
 * creates that queue while one runs share the next commit, as SQLite's
 * group fsync shares the disk.
 *
 * Three lanes: the agents' status reports (DB_GROUP_LIVE) are taken
 * before volume creates (DB_GROUP_API), those before the reconciler's
 * visits (DB_GROUP_RECON), and db_group_yield lets a
 * writer of many transactions (the failover pass, srv_drain.c) step aside
 * for them between its own: a report that renews a node's liveness waits
 * for at most one of that writer's transactions and one group, not for
 * the whole pass (at 5,000 volumes on a node going DOWN, one transaction
 * held the writer mutex for seconds and the reports queued behind it
 * made more nodes DOWN). db_group_close fails what is queued at a stop. */
#include "db/db_engine.h"

#include <pthread.h>
#include <time.h>

/* A queued body; lives on its caller's stack until done. */
struct dg_item {
	db_group_fn fn;
	void *arg;
	enum db_group_lane lane;
	int rc;
	bool done;
	uint64_t t0; /* when its caller queued it */
	struct dg_item *next;
};

struct dg_queue {
	struct dg_item *head, **tail;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct dg_queue q[DB_GROUP_LANES];
	bool leading;
	bool closed;
	size_t max;         /* bodies a group at most (db_group_limits) */
	uint64_t budget_ns; /* no more bodies taken once a group ran this long */
	struct db_group_stats st;
} dg = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .max = DB_GROUP_MAX,
	 .budget_ns = DB_GROUP_BUDGET_NS };

static const char *const dg_lane_names[DB_GROUP_LANES] = {
	[DB_GROUP_LIVE] = "live",
	[DB_GROUP_API] = "api",
	[DB_GROUP_RECON] = "recon",
};

static uint64_t dg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The queue of a lane, its tail set on first use. Under dg.mu. */
static struct dg_queue *dg_q(enum db_group_lane lane)
{
	struct dg_queue *q = &dg.q[lane];

	if (!q->tail)
		q->tail = &q->head;
	return q;
}

/* The next queued body for a group that has run n since t0, the live
 * lane first, or NULL when the queues are empty or the group is full.
 * Under dg.mu. */
static struct dg_item *dg_take(size_t n, uint64_t t0)
{
	struct dg_queue *q = NULL;
	struct dg_item *it;

	if (n >= dg.max || (n > 0 && dg_now_ns() - t0 >= dg.budget_ns))
		return NULL;
	for (int l = 0; l < DB_GROUP_LANES && !q; l++)
		if (dg.q[l].head)
			q = dg_q((enum db_group_lane)l);
	if (!q)
		return NULL;
	it = q->head;
	q->head = it->next;
	if (!q->head)
		q->tail = &q->head;
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

/* it is done with rc: its lane's wait counters. Under dg.mu. */
static void dg_done(struct dg_item *it, int rc)
{
	struct db_group_lane_stats *ls = &dg.st.lane[it->lane];
	uint64_t w = dg_now_ns() - it->t0;

	it->rc = rc;
	it->done = true;
	ls->wait_ns += w;
	if (w > ls->wait_max_ns)
		ls->wait_max_ns = w;
}

/* Take me out of my lane's queue, failed with rc. Under dg.mu. */
static void dg_fail_own(struct dg_item *me, int rc)
{
	struct dg_queue *q = dg_q(me->lane);
	struct dg_item **pp;

	for (pp = &q->head; *pp && *pp != me; pp = &(*pp)->next)
		;
	if (!*pp)
		return; /* already taken */
	*pp = me->next;
	if (q->tail == &me->next)
		q->tail = pp;
	dg.st.queued--;
	dg_done(me, rc);
}

/* Lead one group on db, the connection of me's caller (dg.leading set by
 * the caller, dg.mu not held). */
static void dg_lead(struct db *db, struct dg_item *me)
{
	struct dg_item *first = NULL, **last = &first, *it;
	bool in_lane[DB_GROUP_LANES] = { false };
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
		in_lane[it->lane] = true;
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
		for (int l = 0; l < DB_GROUP_LANES; l++)
			dg.st.lane[l].groups += in_lane[l];
	}
	for (it = first; it; it = it->next) {
		dg.st.lane[it->lane].items++;
		dg_done(it, it->rc);
	}
	pthread_cond_broadcast(&dg.cv);
	pthread_mutex_unlock(&dg.mu);
}

int db_group_run(struct db *db, enum db_group_lane lane, db_group_fn fn, void *arg)
{
	struct dg_item me = { .fn = fn, .arg = arg, .lane = lane, .rc = AQ_EIO, .t0 = dg_now_ns() };
	struct dg_queue *q;

	if (!db || !fn || db->in_tx || (unsigned)lane >= DB_GROUP_LANES)
		return AQ_EINVAL; /* the leader would wait for its own writer mutex */
	pthread_mutex_lock(&dg.mu);
	if (dg.closed) {
		pthread_mutex_unlock(&dg.mu);
		return AQ_EUNAVAIL;
	}
	q = dg_q(lane);
	*q->tail = &me;
	q->tail = &me.next;
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

bool db_group_yield(uint64_t timeout_ns)
{
	struct timespec until;
	bool empty;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)(timeout_ns / 1000000000ull);
	until.tv_nsec += (long)(timeout_ns % 1000000000ull);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&dg.mu);
	while ((dg.q[DB_GROUP_LIVE].head || dg.leading) && !dg.closed)
		if (pthread_cond_timedwait(&dg.cv, &dg.mu, &until) != 0)
			break;
	empty = !dg.q[DB_GROUP_LIVE].head;
	pthread_mutex_unlock(&dg.mu);
	return empty;
}

void db_group_close(void)
{
	pthread_mutex_lock(&dg.mu);
	dg.closed = true;
	for (int l = 0; l < DB_GROUP_LANES; l++) {
		struct dg_queue *q = dg_q((enum db_group_lane)l);

		while (q->head)
			dg_fail_own(q->head, AQ_EUNAVAIL);
	}
	pthread_cond_broadcast(&dg.cv);
	pthread_mutex_unlock(&dg.mu);
}

void db_group_reopen(void)
{
	pthread_mutex_lock(&dg.mu);
	dg.closed = false;
	pthread_mutex_unlock(&dg.mu);
}

void db_group_stats(struct db_group_stats *st)
{
	pthread_mutex_lock(&dg.mu);
	*st = dg.st;
	pthread_mutex_unlock(&dg.mu);
}

const char *db_group_lane_name(enum db_group_lane lane)
{
	return (unsigned)lane < DB_GROUP_LANES ? dg_lane_names[lane] : "";
}

uint64_t db_group_budget(void)
{
	uint64_t b;

	pthread_mutex_lock(&dg.mu);
	b = dg.budget_ns;
	pthread_mutex_unlock(&dg.mu);
	return b;
}

void db_group_limits(size_t max, uint64_t budget_ns)
{
	pthread_mutex_lock(&dg.mu);
	dg.max = max >= 1 && max <= DB_GROUP_MAX ? max : DB_GROUP_MAX;
	dg.budget_ns = budget_ns ? budget_ns : DB_GROUP_BUDGET_NS;
	pthread_mutex_unlock(&dg.mu);
}
