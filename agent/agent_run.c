/* aquifer-agent's entry point. Everything lives in libaqagent. */
#include "agent/agent.h"

int main(int argc, char **argv)
{
	return agent_main(argc, argv);
}
