/* agent: aquifer-agent, the program on every storage node.
 *
 * It joins the control plane with a node-role join token (and keeps the
 * credentials it gets in --state-dir), takes the desired state aquiferd
 * pushes at PUT /v1/intent, applies it idempotently to the embedded NFS
 * server over the shelf, persists it atomically before answering, and
 * reports the applied generation and per-volume usage back every couple of
 * seconds. At start it serves its last applied state at once, before it
 * reaches aquiferd, so a control-plane outage never stops the data path.
 */
#ifndef AQ_AGENT_H
#define AQ_AGENT_H

int agent_main(int argc, char **argv);

#endif
