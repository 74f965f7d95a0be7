/* cli_buf: percent-encoding onto a ut_buf (see cli_buf.h). */
#include "cli/cli_buf.h"

void cli_buf_add_escaped(struct ut_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char enc[3];

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~') {
			ut_buf_add(b, s, 1);
			continue;
		}
		enc[0] = '%';
		enc[1] = hex[c >> 4];
		enc[2] = hex[c & 15];
		ut_buf_add(b, enc, 3);
	}
}
