/* obj_xml: the few S3 XML answers obj_s3 reads, parsed from untrusted bytes.
 *
 * Not a general XML parser: it scans elements and their text, knows the
 * ListObjectsV2 result (Contents/Key, Contents/Size, IsTruncated,
 * NextContinuationToken) and S3 error bodies (Error/Code, Error/Message),
 * and ignores every other element. Bounded: a body larger than
 * OBJ_XML_BODY_MAX, a key longer than OBJ_KEY_MAX, a token longer than
 * OBJ_XML_TOKEN_MAX, a Size that is not a decimal uint64, an unknown entity,
 * CDATA in a field we read, or a truncated tag is -EIO; it never reads past
 * buf[len) and needs no terminating NUL. Entities: &amp; &lt; &gt; &quot;
 * &apos; and numeric references (&#NN; &#xNN;) of ASCII characters only.
 */
#ifndef AQ_AGENT_OBJ_XML_H
#define AQ_AGENT_OBJ_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/obj/obj.h"

#define OBJ_XML_BODY_MAX (8u << 20)
#define OBJ_XML_TOKEN_MAX 4096

struct obj_xml_page {
	bool truncated;                     /* IsTruncated was "true" */
	char token[OBJ_XML_TOKEN_MAX + 1];  /* NextContinuationToken, "" if none */
	size_t keys;                        /* Contents entries seen */
};

/* Calls cb(arg, key, size) for each Contents entry of a ListObjectsV2
 * result, in document order (keys are raw: the caller checks them). A
 * non-zero cb return stops the parse and is returned. 0 or -EIO. */
int obj_xml_list(const char *buf, size_t len, obj_list_cb cb, void *arg, struct obj_xml_page *page);

struct obj_xml_error {
	char code[64];
	char message[256];  /* truncated to fit */
};
/* Reads Code and Message of an S3 <Error> body. 0 when a Code was found,
 * else -EIO (err then holds empty strings). */
int obj_xml_error(const char *buf, size_t len, struct obj_xml_error *err);

#endif
