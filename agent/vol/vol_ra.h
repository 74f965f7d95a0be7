/* vol_ra: read-ahead of the volume store (issue 23).
 *
 * A volume whose readAhead.mode is CROSS_FILE_SEQUENTIAL (api_intent.h)
 * plays a film: tens of thousands of frame files, each read whole, in name
 * order. When a client reads such a file from its start, the store predicts
 * the next names from its numeric suffix and prefetches the next files
 * that exist in the same folder, up to depthFiles, so the next frame is in
 * memory before the client asks. It lives in the store's read path, so
 * every protocol front end (NFSv3, SMB) gets it.
 *
 * Depth (the ramp, vol_store_set_read_ahead_ramp, on by default): a file's
 * cache entry carries its run, how many files of its stream were
 * prefetched in a row up to it (a file nothing predicted: 0). A READ that
 * triggers asks for run + 1 files, at most depthFiles, and the files it
 * adds get run + 1. A READ triggers when it starts at offset 0 (the file
 * is opened) or reaches the file's end: the next frame's prefetch starts
 * while frame N is read, not after it. A film's first frame asks for one
 * file, the next for two, ...: the prefetch grows with what the client
 * plays; in a steady play each frame adds one file at the far end.
 *
 * Demand first (vol_ra_demand_begin, around every client READ that goes
 * to the tier's read hook): while client READs are at the tier, at most
 * VOL_RA_DEMAND_SHARE prefetch reads of cold chunks start there (the
 * others wait in the pool's queue, which is the only queue: there is no
 * second pool), so a READ of a file nothing prefetched (a film's first
 * frame) does not wait at the store behind the prefetch of later frames.
 * A client READ that overlaps a chunk a worker reads now waits for it and
 * then reads what it brought (joins it: no second GET); a chunk whose
 * worker still waits at the gate (its GET not started) is taken over
 * instead: the READ fetches it at once, as demand, and the worker drops it
 * (waiting for it would hold the READ behind the other clients' demand
 * that holds the gate: a film's second frame behind the other film's
 * first). A chunk a client
 * READ asked for after the job was queued is not fetched by the job (the
 * client has it, or reads it now); the job goes on with its next file.
 * A file read whole that a prediction names again is a replay: its entry
 * is forgotten and the file fetched again.
 *
 * Prediction (pure, vol_ra_next / vol_ra_predict): the counter is the run
 * of digits that ends the name, or that ends just before its extension (the
 * last '.' and what follows, when that is not all digits): frame000123.dpx,
 * take_7, shot.0042 (no extension: ".0042" is all digits, so the run is the
 * counter). Decimal first, keeping the zero-padded width (frame000123.dpx
 * -> frame000124.dpx); when none of the decimal successors exist, the run
 * of hexadecimal digits in the same place, keeping the case of its last
 * letter (frame00af -> frame00b0, FRAME00AF -> FRAME00B0; letters before
 * the run's first decimal digit are the stem's and do not count; a run
 * without letters of its own tries lower case, then upper case). Digits
 * inside an extension are not a counter (a.tar.gz7). A run that carries past its
 * width grows by one digit (frame999.dpx -> frame1000.dpx, ff -> 100): an
 * unpadded count goes on, and a padded one that wrapped finds no file, so
 * nothing is prefetched. The hex run may take in trailing hex letters of
 * the stem (frame00ff: "e00ff"); that changes the successor only when the
 * count itself carries out (frameffff -> framf0000, which will not exist).
 * Names are at most VOL_RA_NAME_MAX bytes; a successor longer than that is
 * not made. Only the current folder is looked in.
 *
 * Gaps: a walk goes on past up to VOL_RA_GAP_MAX names in a row that do not
 * exist (a dropped render), then stops. No name found: nothing prefetched
 * (and the next client read tries again).
 *
 * Prefetch (vol_ra_fetch.c, a pool of worker threads of the store,
 * vol_store_set_read_ahead_workers, default VOL_RA_WORKERS): each predicted
 * file is read ahead in VOL_RA_CHUNK pieces into the node's page cache,
 * handed out in order (nearest file first) to the workers, so several
 * pieces (of one file and of the next ones) are read at once; the volumes'
 * queues are served round-robin, so a volume with a long queue does not
 * keep a second one waiting for all its jobs. Each piece is
 * charged to the volume's QoS as a READ of its size before it is read
 * (so a volume never goes past its limit with prefetch on), and only with
 * the tokens the volume's clients leave (qos_take: while a client waits for
 * tokens or the bucket is empty, the job ends and the next READ of the
 * film starts one again). A file whose data is on the cold tier is read through the
 * tier's read_ahead hook (its ranged GETs; read when the tier has none), so
 * it is recalled ahead of the client, up to one GET per worker at once, and
 * the tier lets clients' GETs go first (tier.h, "Demand first"). What is prefetched and not yet
 * read is bounded per node and per volume (vol_store_set_read_ahead): at a cap
 * the oldest unread file of that volume (else of the node) is dropped from
 * the cache (POSIX_FADV_DONTNEED) and counted wasted. A client READ of a
 * prefetched file counts a hit; a write, truncate, remove or rename of it
 * forgets it (what was unread counts wasted).
 *
 * At open (vol_read_ahead_open, called by the front ends at SMB CREATE,
 * NFSv4.1 OPEN and NFSv3 LOOKUP): a film's first frame is opened before it
 * is read, and a cold one took longer than its slot to come (its chunks
 * were asked one READ after the other). When the opened file's name has a
 * successor that exists (it is a frame of a sequence), or its folder is
 * being played (a file of that folder is in the cache, not read whole), a
 * job fetches the opened file's head (its first VOL_RA_OPEN_HEAD bytes,
 * one chunk per default worker, so they go at once) and the heads of the
 * next files, as many as a READ from its start would ask for (the ramp).
 * The job is an ordinary one (charged to QoS, within the caps, the workers
 * and the job limits; the entries it makes say how far they are to go,
 * ra_file.end); a READ's job that predicts a file whose head an open
 * fetched takes it on to its end (the job that fetches it goes on, or the
 * new one continues where the head ended). A file opened again whose head
 * is cached fetches nothing more. A name with no successor in a folder not
 * being played: nothing.
 *
 * AGGRESSIVE: every READ asks the kernel for the next VOL_RA_WINDOW bytes
 * of the same file (POSIX_FADV_WILLNEED), past its own read-ahead window.
 */
#ifndef AQ_AGENT_VOL_RA_H
#define AQ_AGENT_VOL_RA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VOL_RA_NAME_MAX 255
#define VOL_RA_GAP_MAX 4                    /* missing names skipped in a row */
#define VOL_RA_CHUNK (1u << 20)             /* bytes per prefetch step (one QoS charge) */
#define VOL_RA_OPEN_HEAD (4u << 20)        /* bytes of a file fetched at its open (per file) */
#define VOL_RA_WINDOW (8u << 20)            /* AGGRESSIVE: bytes asked for past a READ */
#define VOL_RA_NODE_BYTES (1024ull << 20)   /* default cap of unread prefetched bytes per node */
#define VOL_RA_VOLUME_BYTES (256ull << 20)  /* ... and per volume */
#define VOL_RA_WORKERS 4                    /* default prefetch workers per node */
#define VOL_RA_WORKERS_MAX 32
#define VOL_RA_DEMAND_SHARE 1               /* cold prefetch reads at the tier while clients read there */

/* The successor of name's counter in base 10 or 16 (upper: hex letters in
 * upper case when the run has none to copy) into out (cap bytes): 0, or
 * -ENOENT (no counter in that base), -ENAMETOOLONG (longer than
 * VOL_RA_NAME_MAX or cap - 1). */
int vol_ra_next(const char *name, int base, bool upper, char *out, size_t cap);

/* Whether name exists (as a regular file) where the prediction looks. */
typedef bool (*vol_ra_exists_fn)(void *arg, const char *name);

/* Up to depth (at most max) successors of name that exist, in order, into
 * out: the decimal walk, else the hex walks (above). Returns how many. */
size_t vol_ra_predict(const char *name, int depth, vol_ra_exists_fn exists, void *arg,
		      char (*out)[VOL_RA_NAME_MAX + 1], size_t max);

#endif
