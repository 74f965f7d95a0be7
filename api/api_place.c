/* api_place: see api_place.h. */
#include "api/api_place.h"

int api_place(const struct api_place_node *nodes, size_t n, double mibps, double shelf_headroom,
	      bool overcommit, size_t *chosen, aq_msg *msg)
{
	double best = 0, largest = 0;
	size_t eligible = 0, pick = n;

	for (size_t i = 0; i < n; i++) {
		double head = nodes[i].ceiling_mibps - nodes[i].allocated_mibps;

		if (!nodes[i].eligible)
			continue;
		if (eligible++ == 0 || head > largest)
			largest = head;
		if (!overcommit && head + 1e-6 < mibps)
			continue;
		if (pick == n || head > best) {
			pick = i;
			best = head;
		}
	}
	if (eligible == 0)
		return aq_fail(msg, AQ_EUNAVAIL, "no READY storage node in this location");
	if (!overcommit && shelf_headroom + 1e-6 < mibps)
		return aq_fail(msg, AQ_EEXHAUSTED, "the location's shelves can take %.2f MiB/s more; the volume needs %.2f MiB/s",
			       shelf_headroom > 0 ? shelf_headroom : 0, mibps);
	if (pick == n)
		return aq_fail(msg, AQ_EEXHAUSTED, "no storage node has %.2f MiB/s of headroom; the largest headroom is %.2f MiB/s",
			       mibps, largest > 0 ? largest : 0);
	*chosen = pick;
	return AQ_OK;
}

int api_place_capacity(double shelf_gib, double used_gib, double grow_gib, const char *shelves, const char *loc,
		       aq_msg *msg)
{
	double left = shelf_gib - used_gib;

	if (grow_gib <= 0 || used_gib + grow_gib <= shelf_gib + 1e-6)
		return AQ_OK;
	return aq_fail(msg, AQ_EEXHAUSTED,
		       "shelf capacity exhausted: location %s's shelves (%s) hold %.0f GiB with %.0f GiB free; the volume needs %.0f GiB more",
		       loc, shelves, shelf_gib, left > 0 ? left : 0, grow_gib);
}
