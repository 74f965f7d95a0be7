/* aquifer: the command-line client. Everything lives in libaqcli. */
#include "cli/cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
