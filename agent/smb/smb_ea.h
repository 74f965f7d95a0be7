/* smb_ea: extended attribute lists (MS-FSCC 2.4.15 FILE_FULL_EA_INFORMATION,
 * 2.4.15.1 FILE_GET_EA_INFORMATION), pure: no store, no allocation. What a
 * client sends in SET_INFO FileFullEaInformation, the ExtA create context
 * and a QUERY_INFO's EA name list is checked here before anything changes,
 * and the list the store keeps for a file (vol_ea_get/vol_ea_set) is in the
 * same form: entries 4-byte aligned, each NextEntryOffset the entry's
 * padded size, the last 0, at most SMB_EA_LIST_MAX bytes in all. Its length
 * is the EaSize clients are told (what smbd answers).
 *
 * Limits (what Windows and smbd enforce): a name of 1 to 255 bytes (its
 * length field is one byte) of no control character and none of
 * "*+,/:;<=>?[\]| (STATUS_INVALID_EA_NAME), a value of at most 65535 bytes
 * (a two-byte length), Flags 0 or FILE_NEED_EA (else STATUS_INVALID_EA_FLAG),
 * and the whole list of a file within SMB_EA_LIST_MAX (STATUS_EA_TOO_LARGE).
 * Names compare case-insensitively (ASCII), keep the case last set.
 *
 * Return codes: the walkers and smb_ea_merge AQ_OK, AQ_EINVAL (malformed:
 * an entry past the buffer or its next offset, a missing terminating NUL,
 * a misaligned or short next offset), AQ_ETOOBIG (over a cap); smb_ea_check
 * the NTSTATUS a client is answered (see there).
 */
#ifndef AQ_AGENT_SMB_EA_H
#define AQ_AGENT_SMB_EA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SMB_EA_NEED_EA 0x80u        /* FILE_NEED_EA */
#define SMB_EA_LIST_MAX 65535u       /* a file's whole list (what NTFS keeps; VOL_EA_MAX) */
#define SMB_EA_HDR 8u                /* NextEntryOffset, Flags, EaNameLength, EaValueLength */
#define STATUS_INVALID_EA_NAME 0x80000013u
#define STATUS_INVALID_EA_FLAG 0x80000015u
#define STATUS_NO_MORE_EAS 0x80000012u
#define STATUS_EA_TOO_LARGE 0xC0000050u
#define STATUS_EAS_NOT_SUPPORTED 0xC000004Fu

/* One entry, pointing into the list it was read from. */
struct smb_ea {
	uint8_t flags;
	uint8_t name_len;
	uint16_t value_len;
	const uint8_t *name;  /* name_len bytes, then a NUL */
	const uint8_t *value;
};

/* Walks a FILE_FULL_EA_INFORMATION list: smb_ea_next gives 1 and the next
 * entry, 0 at the end, or an error (sticky: every later call returns it). */
struct smb_ea_iter {
	const uint8_t *p;
	size_t len, off;
	bool done;
	int err;
};
void smb_ea_iter_init(struct smb_ea_iter *it, const uint8_t *p, size_t len);
int smb_ea_next(struct smb_ea_iter *it, struct smb_ea *ea);

/* A list a client sends: STATUS_SUCCESS when it is well formed, every
 * name valid and every flag known, its entry count in *count (may be NULL);
 * else STATUS_INVALID_PARAMETER (malformed, empty, or past
 * SMB_EA_LIST_MAX bytes, as smbd), STATUS_INVALID_EA_NAME or
 * STATUS_INVALID_EA_FLAG. */
uint32_t smb_ea_check(const uint8_t *p, size_t len, size_t *count);

/* The size of e as an entry of a list (padded to 4 unless last). */
size_t smb_ea_entry_size(const struct smb_ea *e, bool last);
/* Write e at out (room for smb_ea_entry_size(e, last) bytes). */
void smb_ea_put(uint8_t *out, const struct smb_ea *e, bool last);

/* Append e to the list out[0..*len) of at most cap bytes, whose last
 * entry starts at *last_off (the list empty: *len 0): that entry gets its
 * padding and NextEntryOffset, e goes last. AQ_ETOOBIG (nothing changed)
 * when it does not fit. */
int smb_ea_add(uint8_t *out, size_t cap, size_t *len, size_t *last_off, const struct smb_ea *e);

/* old (a kept list, or NULL/0) with the checked list upd applied, as a SET
 * does: an entry of upd with a value replaces the one of its name (or is
 * added at the end), one without a value removes it (absent: nothing).
 * The result in out[cap] (cap >= SMB_EA_LIST_MAX), its length in *len
 * (0: no EA left). AQ_ETOOBIG when the result would pass SMB_EA_LIST_MAX,
 * AQ_EINVAL when old or upd is malformed. */
int smb_ea_merge(const uint8_t *old, size_t old_len, const uint8_t *upd, size_t upd_len, uint8_t *out,
		 size_t cap, size_t *len);

/* The entry named name[0..nlen) in list (case-insensitive): 1 and *e, 0. */
int smb_ea_find(const uint8_t *list, size_t len, const uint8_t *name, size_t nlen, struct smb_ea *e);
/* Whether any entry of list has FILE_NEED_EA. */
bool smb_ea_any_needed(const uint8_t *list, size_t len);

/* Walks a FILE_GET_EA_INFORMATION list (NextEntryOffset, EaNameLength,
 * EaName and its NUL): 1 and the name, 0 at the end, or an error (sticky). */
int smb_ea_get_next(struct smb_ea_iter *it, const uint8_t **name, uint8_t *nlen);

#endif
