/* ut_buf: one growable byte buffer with a named cap and a sticky error (the
 * shape of curl's dynbuf).
 *
 * Every buffer is given its cap when it is initialised, by a named constant of
 * its user (e.g. SRV_METRICS_MAX), never "as much as it takes":
 *     struct ut_buf b;
 *     ut_buf_init(&b, SRV_METRICS_MAX);
 *     ut_buf_addf(&b, "%s %d\n", name, value);  ...more appends...
 *     if (ut_buf_err(&b) != AQ_OK) goto out;     one check for the whole text
 *     use ut_buf_str(&b), ut_buf_len(&b);
 *     ut_buf_cleanup(&b);
 *
 * Contract:
 * - The content may grow to exactly max bytes (a NUL always follows it, not
 *   counted). An append that would pass max adds nothing and sets the sticky
 *   error AQ_ETOOBIG; a failed allocation sets AQ_ENOMEM. Once set, every
 *   append is a no-op until ut_buf_reset(). The allocation never exceeds
 *   max + 1 bytes.
 * - The text is NUL-terminated and may hold NUL bytes (ut_buf_add); ut_buf_str
 *   returns "" for an empty buffer, never NULL. Borrowed until the next append.
 * - Binary users (the XDR and SMB encoders) reserve bytes with
 *   ut_buf_put_zero and fill them, patch fields written earlier with the
 *   ut_buf_set_* setters (a no-op out of range or once the error is set), and
 *   drop a record that did not fit with ut_buf_rewind.
 * - Not thread-safe: one owner at a time.
 */
#ifndef AQ_UT_BUF_H
#define AQ_UT_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "api/api_error.h"

struct ut_buf {
	char *p;
	size_t len;  /* bytes of content, NUL not counted */
	size_t cap;  /* bytes allocated */
	size_t max;  /* the named cap of content */
	int err;     /* AQ_OK, AQ_ETOOBIG or AQ_ENOMEM; sticky */
};

/* An empty buffer whose content may never pass max bytes. Allocates nothing. */
void ut_buf_init(struct ut_buf *b, size_t max);
/* Frees the memory; b is empty (same max) afterwards. */
void ut_buf_cleanup(struct ut_buf *b);
/* Empties b and clears the error; keeps the memory for reuse. */
void ut_buf_reset(struct ut_buf *b);

/* Append n bytes / a C string / a printf-formatted text. Each returns the
 * buffer's error after the call (AQ_OK when the text was added whole). */
int ut_buf_add(struct ut_buf *b, const void *data, size_t n);
int ut_buf_adds(struct ut_buf *b, const char *s);
int ut_buf_addf(struct ut_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append n zero bytes and return a pointer to them, valid until the next
 * append; NULL (and nothing added) once the error is set. */
void *ut_buf_put_zero(struct ut_buf *b, size_t n);
/* As ut_buf_put_zero, but the n bytes are left as they are (not zeroed; the
 * NUL after them is written): for a caller that fills them all, or cuts the
 * length back to what it filled (a READ's data: a 1 MiB memset per READ
 * is not paid for bytes the file's data overwrites). */
void *ut_buf_put_room(struct ut_buf *b, size_t n);
/* Overwrite 2 or 4 bytes of content at off, big- or little-endian. No-op when
 * they do not lie inside the content or when the buffer holds an error. */
void ut_buf_set_be32(struct ut_buf *b, size_t off, uint32_t v);
void ut_buf_set_le16(struct ut_buf *b, size_t off, uint16_t v);
void ut_buf_set_le32(struct ut_buf *b, size_t off, uint32_t v);
/* Cut the content back to len bytes (no-op if it is shorter) and clear the
 * error: undoes the appends since a mark, e.g. a record that did not fit. */
void ut_buf_rewind(struct ut_buf *b, size_t len);

/* The content (NUL-terminated, "" when empty), its length, the sticky error. */
const char *ut_buf_str(const struct ut_buf *b);
size_t ut_buf_len(const struct ut_buf *b);
int ut_buf_err(const struct ut_buf *b);
/* The content as bytes (NULL while nothing was ever added); for writers. */
uint8_t *ut_buf_bytes(const struct ut_buf *b);

/* Hands the heap copy to the caller (free()) and leaves b empty; *len (may be
 * NULL) gets its length. NULL when b holds an error (b is emptied anyway) or
 * when nothing could be allocated. */
char *ut_buf_steal(struct ut_buf *b, size_t *len);

#endif
