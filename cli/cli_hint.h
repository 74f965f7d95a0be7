/* cli_hint: error hints in the words of the CLI.
 *
 * aquiferd's messages are written for API clients and name HTTP routes
 * ("drain it (POST /v1/nodes/n1:drain)"). Before the CLI prints one, every
 * "METHOD /v1/..." in it that a row of the command table serves is replaced
 * by the command that sends it ("aquifer nodes drain n1"); the argument is
 * the route's {name}, or the ID parameter of a create (?locationId=ID).
 * Routes no command sends are left as they are.
 */
#ifndef AQ_CLI_HINT_H
#define AQ_CLI_HINT_H

#include "cli/cli_buf.h"

/* Append text to out with its routes turned into aquifer commands. */
void cli_hint_rewrite(const char *text, struct ut_buf *out);

#endif
