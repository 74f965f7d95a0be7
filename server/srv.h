/* srv: aquiferd's top level. srv_main() parses the command line (serve, token,
 * ...) and runs the chosen command; it returns the process exit status. */
#ifndef AQ_SRV_H
#define AQ_SRV_H

int srv_main(int argc, char **argv);

#endif
