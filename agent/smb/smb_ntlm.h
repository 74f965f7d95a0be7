/* smb_ntlm: the server side of NTLMv2 (MS-NLMP) with no I/O and no user
 * store: parse the client's NEGOTIATE_MESSAGE and AUTHENTICATE_MESSAGE,
 * build the CHALLENGE_MESSAGE with its AV pairs (names, timestamp), and
 * check an AUTHENTICATE against the user's NT hash: NTOWFv2, NTProofStr,
 * the session base key, the key exchange, the MIC and the timestamp.
 *
 * Only NTLMv2 is accepted: an NtChallengeResponse of 24 bytes (NTLMv1 or
 * LM) and the anonymous form (empty user and responses) are refused with
 * AQ_EACCES, as the issue requires; the LM response is ignored.
 *
 * The flow the server runs (the auth seam: SPNEGO picks the mechanism,
 * this module is the NTLM one, Kerberos would be another behind the same
 * smb_spnego calls):
 *   smb_ntlm_negotiate_decode(type 1)   -> client flags
 *   smb_ntlm_challenge_encode(...)      -> type 2, kept for the MIC
 *   smb_ntlm_auth_decode(type 3)        -> user and domain (UTF-16LE)
 *   (look the user up, get its NT hash)
 *   smb_ntlm_auth_check(...)            -> the session key, or AQ_EACCES
 *
 * Decoders are bounded: every (length, offset) field is checked against
 * the message before use; the pointers they return point into it.
 * Return codes: AQ_OK, AQ_EINVAL (malformed), AQ_EACCES (refused: wrong
 * password, bad MIC, stale timestamp, NTLMv1, anonymous), AQ_ETOOBIG (a
 * name over SMB_NTLM_NAME_MAX), AQ_EINTERNAL (OpenSSL failed).
 */
#ifndef AQ_AGENT_SMB_NTLM_H
#define AQ_AGENT_SMB_NTLM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/smb/smb_wire.h"

#define SMB_NTLM_NAME_MAX 512u /* user, domain, workstation: UTF-16 bytes */
/* The largest NTLMSSP message accepted: names, a blob with AV pairs. */
#define SMB_NTLM_MSG_MAX 8192u

/* NegotiateFlags (2.2.2.5) */
#define NTLMSSP_NEGOTIATE_UNICODE 0x00000001u
#define NTLMSSP_NEGOTIATE_OEM 0x00000002u
#define NTLMSSP_REQUEST_TARGET 0x00000004u
#define NTLMSSP_NEGOTIATE_SIGN 0x00000010u
#define NTLMSSP_NEGOTIATE_SEAL 0x00000020u
#define NTLMSSP_NEGOTIATE_LM_KEY 0x00000080u
#define NTLMSSP_NEGOTIATE_NTLM 0x00000200u
#define NTLMSSP_ANONYMOUS 0x00000800u
#define NTLMSSP_NEGOTIATE_ALWAYS_SIGN 0x00008000u
#define NTLMSSP_TARGET_TYPE_DOMAIN 0x00010000u
#define NTLMSSP_TARGET_TYPE_SERVER 0x00020000u
#define NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY 0x00080000u
#define NTLMSSP_NEGOTIATE_TARGET_INFO 0x00800000u
#define NTLMSSP_NEGOTIATE_VERSION 0x02000000u
#define NTLMSSP_NEGOTIATE_128 0x20000000u
#define NTLMSSP_NEGOTIATE_KEY_EXCH 0x40000000u
#define NTLMSSP_NEGOTIATE_56 0x80000000u

/* AV pair ids (2.2.2.1) */
#define MSV_AV_EOL 0u
#define MSV_AV_NB_COMPUTER_NAME 1u
#define MSV_AV_NB_DOMAIN_NAME 2u
#define MSV_AV_DNS_COMPUTER_NAME 3u
#define MSV_AV_DNS_DOMAIN_NAME 4u
#define MSV_AV_FLAGS 6u
#define MSV_AV_TIMESTAMP 7u
#define MSV_AV_FLAG_MIC_PRESENT 0x00000002u

/* Windows' clock: 100 ns since 1601 (the AV timestamp, SMB2 times). */
#define SMB_NTLM_FILETIME_SEC 10000000ull

/* NEGOTIATE_MESSAGE: only its flags matter to the server. */
int smb_ntlm_negotiate_decode(const uint8_t *msg, size_t len, uint32_t *flags);

/* The flags the server answers a client's with: what it asks for among
 * what this server does (UNICODE, NTLM, ESS, 128, 56, KEY_EXCH, SIGN,
 * SEAL, ALWAYS_SIGN, VERSION), plus TARGET_INFO and TARGET_TYPE_SERVER.
 * AQ_EINVAL if the client cannot do UNICODE or NTLM. */
int smb_ntlm_answer_flags(uint32_t client_flags, uint32_t *flags);

struct smb_ntlm_challenge {
	uint32_t flags;
	uint8_t challenge[8];   /* random, from the caller */
	const char *target;     /* UTF-8: TargetName (the NetBIOS domain) */
	/* AV pairs, UTF-8, NULL to leave one out; sent in this order: */
	const char *nb_domain, *nb_computer, *dns_domain, *dns_computer;
	bool has_timestamp;     /* MsvAvTimestamp: makes clients send a MIC */
	uint64_t timestamp;     /* FILETIME */
	uint8_t version[8];     /* sent when flags has NEGOTIATE_VERSION */
};

/* Append the CHALLENGE_MESSAGE to buf (its first byte at buf->len). */
int smb_ntlm_challenge_encode(struct ut_buf *buf, const struct smb_ntlm_challenge *c);

struct smb_ntlm_auth {
	uint32_t flags;
	const uint8_t *lm, *nt, *domain, *user, *workstation, *enc_key;
	size_t lm_len, nt_len, domain_len, user_len, workstation_len, enc_key_len;
	bool has_mic;
	size_t mic_off;         /* where the 16-byte MIC lies in the message */
};

/* Parse an AUTHENTICATE_MESSAGE (2.2.1.3). AQ_EINVAL if a field lies
 * outside the message, a name is odd-sized, or the message is not type 3;
 * AQ_ETOOBIG for a name over SMB_NTLM_NAME_MAX. */
int smb_ntlm_auth_decode(const uint8_t *msg, size_t len, struct smb_ntlm_auth *a);

/* The value of AV pair id in an AV pair list (len bytes), bounded;
 * AQ_ENOENT if absent, AQ_EINVAL if the list runs past its end or has no
 * MsvAvEOL. */
int smb_ntlm_av_find(const uint8_t *list, size_t len, uint16_t id, const uint8_t **val, size_t *vlen);

struct smb_ntlm_check {
	const uint8_t *nt_hash;          /* 16 bytes: MD4 of the UTF-16 password */
	const uint8_t *server_challenge; /* 8 bytes, as sent */
	const uint8_t *negotiate, *challenge, *authenticate; /* the three messages, for the MIC */
	size_t negotiate_len, challenge_len, authenticate_len;
	uint64_t now;                    /* FILETIME; 0: skip the timestamp check */
	uint64_t max_skew;               /* in FILETIME units */
};

/* Check a decoded AUTHENTICATE (a, from c->authenticate). On AQ_OK,
 * session_key holds the ExportedSessionKey (the SMB session key). */
int smb_ntlm_auth_check(const struct smb_ntlm_check *c, const struct smb_ntlm_auth *a, uint8_t session_key[16]);

/* The NT hash of a UTF-8 password (NTOWFv1: MD4 of its UTF-16LE form);
 * AQ_EINVAL on bad UTF-8, AQ_ETOOBIG over 256 characters. */
int smb_ntlm_nt_hash(const char *password, uint8_t hash[16]);
/* NTOWFv2 (3.3.2): HMAC-MD5(nt_hash, UTF-16LE(Upper(user)) || domain);
 * user and domain in UTF-16LE. Upper() folds ASCII and Latin-1; other
 * letters are taken as they are (clients fold them like Windows). */
int smb_ntlm_ntowfv2(const uint8_t nt_hash[16], const uint8_t *user, size_t user_len, const uint8_t *domain,
		     size_t domain_len, uint8_t out[16]);

#endif
