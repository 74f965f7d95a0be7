/* rpc_sock: ONC RPC over a plain TCP socket, for the live NFS tests that
 * must put exact bytes on the wire (test_nfs_robust: hostile records;
 * test_nfs_handoff: counted calls): connect, build a call record, send it
 * whole, read one reply record. No XDR library, no state: the caller owns
 * every buffer and socket. Words are big-endian (XDR). */
#ifndef AQ_TESTS_RPC_SOCK_H
#define AQ_TESTS_RPC_SOCK_H

#include <stddef.h>
#include <stdint.h>

/* A connected TCP socket to 127.0.0.1:port with TCP_NODELAY; SO_RCVBUF set
 * to rcvbuf first when it is > 0 (a peer that reads slowly). A test that
 * cannot connect cannot go on: prints the error and exits 1. */
int rpc_sock_dial(int port, int rcvbuf);

/* v as four big-endian bytes at b; returns 4 (the bytes written). */
size_t rpc_sock_p32(uint8_t *b, uint32_t v);
/* The big-endian word at b. */
uint32_t rpc_sock_g32(const uint8_t *b);

/* A whole call record into b: the record mark (last fragment), the call
 * header (xid, CALL, rpcvers, prog, vers, proc, credential flavor with an
 * empty body, AUTH_NONE verifier) and alen bytes of args (args may be NULL
 * when alen is 0). b must hold 44 + alen bytes; returns the record's
 * length with its mark. */
size_t rpc_sock_call(uint8_t *b, uint32_t xid, uint32_t rpcvers, uint32_t prog, uint32_t vers,
		     uint32_t proc, uint32_t flavor, const uint8_t *args, size_t alen);

/* All n bytes of b sent (MSG_NOSIGNAL): 0, or -1 when the connection broke. */
int rpc_sock_send_all(int fd, const void *b, size_t n);
/* Exactly n bytes into b, waiting at most ms for each read: 0, -ETIMEDOUT
 * or -EPIPE (closed or failed). */
int rpc_sock_recv_all(int fd, uint8_t *b, size_t n, int ms);
/* One reply record (a single last fragment, as the server sends them) into
 * b: 0 with its length in *len, -EPROTO for a record that is not one last
 * fragment or is longer than cap (*len is then unset), or rpc_sock_recv_all's
 * error (*len may be set, b partly filled). */
int rpc_sock_reply(int fd, uint8_t *b, size_t cap, size_t *len, int ms);
/* One call and its reply: the n bytes of rec (a whole record, as
 * rpc_sock_call builds it) sent, then rpc_sock_reply(fd, r, cap, len, ms).
 * 0, -1 when the send failed, or rpc_sock_reply's error. */
int rpc_sock_ask(int fd, const uint8_t *rec, size_t n, uint8_t *r, size_t cap, size_t *len, int ms);

#endif
