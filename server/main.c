/* aquiferd: the control plane's entry point. Everything lives in libaqsrv. */
#include "server/srv.h"

int main(int argc, char **argv)
{
	return srv_main(argc, argv);
}
