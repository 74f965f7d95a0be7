/* smb_spnego: the SPNEGO (RFC 4178, MS-SPNG) wrapping of SESSION_SETUP
 * security blobs, over a bounded DER reader: decode the client's
 * NegTokenInit and NegTokenResp, encode the server's NegTokenInit2 (in the
 * NEGOTIATE response) and NegTokenResp.
 *
 * This is the auth seam: the server reads which mechanisms the client
 * offers and hands the inner token to the mechanism it picked (NTLMSSP
 * today, smb_ntlm; Kerberos later, by the same calls).
 *
 * The DER reader takes definite lengths only (up to 4 length bytes), low
 * tag numbers only, and checks every length against what is left of its
 * enclosing element before reading it; the pointers returned point into
 * the blob. Unknown mechanism OIDs are skipped (counted in `mechs` as
 * SMB_SPNEGO_OTHER). Return codes: AQ_OK, AQ_EINVAL (malformed, or a
 * NegTokenInit that is not SPNEGO's), AQ_ETOOBIG (over SMB_SPNEGO_MAX),
 * AQ_ENOMEM / AQ_ETOOBIG from the encode buffer.
 */
#ifndef AQ_AGENT_SMB_SPNEGO_H
#define AQ_AGENT_SMB_SPNEGO_H

#include <stddef.h>
#include <stdint.h>

#include "agent/smb/smb_wire.h"

#define SMB_SPNEGO_MAX (64u << 10) /* a SESSION_SETUP blob, Kerberos tickets included */

/* Mechanisms, as bits of smb_spnego_init.mechs */
enum smb_spnego_mech {
	SMB_SPNEGO_NTLMSSP = 0x01, /* 1.3.6.1.4.1.311.2.2.10 */
	SMB_SPNEGO_KRB5 = 0x02,    /* 1.2.840.113554.1.2.2 */
	SMB_SPNEGO_MS_KRB5 = 0x04, /* 1.2.840.48018.1.2.2 */
	SMB_SPNEGO_NEGOEX = 0x08,  /* 1.3.6.1.4.1.311.2.2.30 */
	SMB_SPNEGO_OTHER = 0x80,
};

/* negState (RFC 4178 4.2.2); SMB_SPNEGO_STATE_NONE when absent */
#define SMB_SPNEGO_ACCEPT_COMPLETED 0
#define SMB_SPNEGO_ACCEPT_INCOMPLETE 1
#define SMB_SPNEGO_REJECT 2
#define SMB_SPNEGO_REQUEST_MIC 3
#define SMB_SPNEGO_STATE_NONE (-1)

struct smb_spnego_init {
	unsigned mechs;               /* every mechanism offered */
	unsigned first;               /* the preferred one (its bit), 0 if none */
	const uint8_t *mech_list;     /* the DER mechTypes SEQUENCE: mechListMIC covers it */
	size_t mech_list_len;
	const uint8_t *token;         /* mechToken: the first one's, NULL if absent */
	size_t token_len;
	const uint8_t *mic;           /* mechListMIC, NULL if absent */
	size_t mic_len;
};

/* [APPLICATION 0] { spnego OID, [0] NegTokenInit }. */
int smb_spnego_init_decode(const uint8_t *blob, size_t len, struct smb_spnego_init *r);

struct smb_spnego_resp {
	int state;                    /* SMB_SPNEGO_STATE_NONE if absent */
	unsigned mech;                /* supportedMech's bit, 0 if absent */
	const uint8_t *token;         /* responseToken */
	size_t token_len;
	const uint8_t *mic;           /* mechListMIC */
	size_t mic_len;
};

/* [1] NegTokenResp. */
int smb_spnego_resp_decode(const uint8_t *blob, size_t len, struct smb_spnego_resp *r);

/* The server's NegTokenInit2 offering mechs (SMB_SPNEGO_NTLMSSP, ...), in
 * the order of the enum, with no token. */
int smb_spnego_init2_encode(struct ut_buf *buf, unsigned mechs);
/* NegTokenResp: state (or SMB_SPNEGO_STATE_NONE), mech (a bit, 0 to
 * omit), token and mic (NULL to omit). */
int smb_spnego_resp_encode(struct ut_buf *buf, int state, unsigned mech, const uint8_t *token,
			   size_t token_len, const uint8_t *mic, size_t mic_len);

#endif
