#include "server/srv.h"
int srv_main(int argc, char **argv) { (void)argc; (void)argv; return 0; }
