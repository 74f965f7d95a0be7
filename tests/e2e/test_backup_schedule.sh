#!/usr/bin/env bash
# test_backup_schedule.sh: scheduled backups (issue 21, acceptance 4) with
# aquiferd on its backup test clock (config backup-schedule-period = 2: a
# day lasts 2 s, a week 14 s, a month about 60 s) and a joined agent making
# the backups:
#  - a volume with backupConfig {vault, policy daily 2 / weekly 1 /
#    monthly 1, scheduledBackupEnabled} gets SCHEDULED backups named
#    <kind>-<volume>-YYYYMMDD-HHMM, and the policy keeps the configured
#    number per kind (READY ones; the oldest go first); the MANUAL backup
#    taken first is never pruned;
#  - in a vault whose retention keeps daily backups for a day (real time),
#    the scheduled dailies are not deleted early: they wait past the limit;
#  - a policy disabled takes no more backups;
#  - kill -9 of aquiferd: after the restart no slot is backed up twice
#    (the slot and its backup are one transaction), at most one catch-up.
. "$(dirname "$0")/lib.sh"

PERIOD=2
printf 'backup-schedule-period = %s\n' "$PERIOD" >"$AQ_TMP/aq.conf"
AQ_SERVE_ARGS=(--config "$AQ_TMP/aq.conf")
D=$AQ_TMP/srv
aq_start "$D" || exit 1
PORT=$AQ_PORT
TOK=$(aq_token "$D" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=bs" '{}'
P=/v1/projects/bs/locations/east
N=projects/bs/locations/east
aq_req POST "$P/storagePools?storagePoolId=pool" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"4096"}'
aq_agent_for east || exit 1

aq_mutate POST "$P/backupVaults?backupVaultId=v1" '{}'
expect_true '.done and (has("error") | not)' "vault v1 (no retention)"
aq_mutate POST "$P/backupVaults?backupVaultId=vr" '{"backupRetentionPolicy":{"backupMinimumEnforcedRetentionDays":1,"dailyBackupImmutable":true}}'
expect_true '.done and (has("error") | not)' "vault vr: daily backups retained one day"
aq_mutate POST "$P/backupPolicies?backupPolicyId=p1" '{"dailyBackupLimit":2,"weeklyBackupLimit":1,"monthlyBackupLimit":1}'
expect_true '.done and (has("error") | not)' "policy p1: daily 2, weekly 1, monthly 1"

aq_mutate POST "$P/volumes?volumeId=a" '{"storagePool":"pool","capacityGib":"100","protocols":["NFSV3"],"shareName":"a"}'
expect_true '.done and (has("error") | not)' "volume a"
aq_req POST "$P/backupVaults/v1/backups?backupId=man1" "{\"sourceVolume\":\"$N/volumes/a\"}"
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 120
expect_jq .response.state READY "a MANUAL backup man1 of a, READY"
aq_mutate PATCH "$P/volumes/a?updateMask=backupConfig" "{\"backupConfig\":{\"backupVault\":\"$N/backupVaults/v1\",\"backupPolicies\":[\"$N/backupPolicies/p1\"],\"scheduledBackupEnabled\":true}}"
expect_true '.done and (has("error") | not)' "a: backupConfig with p1 and scheduledBackupEnabled"
aq_req GET "$P/volumes/a"
expect_jq .backupConfig.scheduledBackupEnabled true "a reads back scheduledBackupEnabled true"
aq_mutate POST "$P/volumes?volumeId=r" "{\"storagePool\":\"pool\",\"capacityGib\":\"100\",\"protocols\":[\"NFSV3\"],\"shareName\":\"r\",
	\"backupConfig\":{\"backupVault\":\"$N/backupVaults/vr\",\"backupPolicies\":[\"$N/backupPolicies/p1\"],\"scheduledBackupEnabled\":true}}"
expect_true '.done and (has("error") | not)' "volume r, scheduled into the retaining vault vr"

# bk VAULT VOLUME KIND: the IDs of VOLUME's READY backups of KIND ("man" for
# MANUAL) in VAULT, sorted
bk() {
	aq_req GET "$P/backupVaults/$1/backups?pageSize=1000"
	printf '%s' "$BODY" | jq -r --arg v "$N/volumes/$2" --arg k "$3" '.backups // [] | .[] |
		select(.sourceVolume == $v and .state == "READY") | .name | split("/") | last | select(startswith($k + "-") or ($k == "man" and startswith("man")))' | sort
}
declare -A SEEN=()
# watch SECONDS [UNTIL-JQ]: remember every scheduled backup ID of v1 and vr;
# MAXD the most READY dailies of a at once
watch_for() {
	local end=$((SECONDS + $1)) id
	while [ $SECONDS -lt $end ]; do
		for v in v1 vr; do
			aq_req GET "$P/backupVaults/$v/backups?pageSize=1000"
			for id in $(printf '%s' "$BODY" | jq -r '.backups // [] | .[] | select(.backupType == "SCHEDULED") | .name | split("/") | last'); do
				SEEN[$id]=1
			done
		done
		mapfile -t cur < <(bk v1 a daily)
		[ ${#cur[@]} -gt "${MAXD:-0}" ] && MAXD=${#cur[@]}
		mapfile -t mon < <(bk v1 a monthly)
		# the test clock's month may end a few seconds after the start: wait
		# for enough days too (6 backups seen, 3 READY dailies of r)
		[ -n "${2:-}" ] && [ ${#mon[@]} -ge 1 ] && [ "$(bk v1 a daily | wc -l)" -ge 2 ] &&
			[ ${#SEEN[@]} -ge 6 ] && [ "$(bk vr r daily | wc -l)" -ge 3 ] && break
		sleep 0.3
	done
}

# up to 100 s (50 days of the test clock): until a monthly backup is READY
# and a few days went by
watch_for 100 monthly
mapfile -t d < <(bk v1 a daily)
mapfile -t w < <(bk v1 a weekly)
mapfile -t m < <(bk v1 a monthly)
ok "scheduled backups were made (${#SEEN[@]} seen)" test ${#SEEN[@]} -ge 6
ok "a monthly backup of a was made (${m[*]:-none})" test ${#m[@]} -ge 1
# a pass prunes within a tick of a new one turning READY: 3 at most in between
ok "never more than dailyBackupLimit+1 READY dailies at once (at most ${MAXD:-0})" test "${MAXD:-0}" -le 3
# the scheduler keeps running: wait for one listing in which a's READY
# scheduled backups are 2 daily, 1 weekly, 1 monthly (a new one is READY a
# tick before the pass that prunes the oldest)
counts() { # the listing in $L: "daily weekly monthly" READY counts of a
	printf '%s' "$L" | jq -r --arg v "$N/volumes/a" '[.backups // [] | .[] | select(.sourceVolume == $v and .state == "READY") |
		.name | split("/") | last] as $n | [($n | map(select(startswith("daily-"))) | length),
		($n | map(select(startswith("weekly-"))) | length), ($n | map(select(startswith("monthly-"))) | length)] | join(" ")'
}
for _ in $(seq 100); do
	aq_req GET "$P/backupVaults/v1/backups?pageSize=1000"
	L=$BODY
	[ "$(counts)" = "2 1 1" ] && break
	sleep 0.2
done
expect_eq "the policy keeps 2 daily, 1 weekly, 1 monthly READY backups of a (one listing)" "2 1 1" "$(counts)"
mapfile -t d < <(printf '%s' "$L" | jq -r '.backups[] | select(.state == "READY") | .name | split("/") | last | select(startswith("daily-a-"))' | sort)
# the kept dailies are the newest: every older daily seen is gone or going
older=$(printf '%s\n' "${!SEEN[@]}" | grep '^daily-a-' | sort | awk -v k="${d[0]}" '$0 < k')
left=0
for id in $older; do
	printf '%s' "$L" | jq -e --arg id "$id" '.backups[] | select((.name | endswith("/" + $id)) and .state != "DELETING")' >/dev/null && left=$((left + 1))
done
ok "the oldest dailies went first ($(printf '%s\n' $older | wc -l) older than the kept ${d[*]}, $left of them left)" test "$left" -eq 0
mapfile -t man < <(bk v1 a man)
expect_eq "the MANUAL backup man1 is never pruned" "man1" "${man[*]}"
bad=$(printf '%s\n' "${!SEEN[@]}" | grep -cvE '^(daily|weekly|monthly)-[ar]-[0-9]{8,}-[0-9]{4}$')
expect_eq "each scheduled backup is named <kind>-<volume>-YYYYMMDD-HHMM" 0 "$bad"
printf '%s' "$L" | jq -e --arg id "${d[0]}" '.backups[] | select(.name | endswith("/" + $id)) | .backupType == "SCHEDULED"' >/dev/null
ok "${d[0]} is backupType SCHEDULED" test $? -eq 0
aq_req GET "$P/backupVaults/v1/backups?pageSize=1000"
why=$(printf '%s' "$BODY" | jq -r '[.backups[] | select(.state == "ERROR") | (.name | split("/") | last) + ": " + .stateDetails] | join("; ")')
expect_true '[.backups[] | select(.state == "ERROR")] | length == 0' "no scheduled backup failed${why:+ ($why)}"

mapfile -t rd < <(bk vr r daily)
ok "in the retaining vault the dailies of r wait past the limit (${#rd[@]} READY, none deleted early)" test ${#rd[@]} -gt 2
aq_req GET "$P/backupVaults/vr/backups?pageSize=1000"
# only the dailies are immutable in vr: a second weekly or monthly of r
# prunes the first as in v1
del=$(printf '%s' "$BODY" | jq -r '[.backups[] | select(.state == "DELETING") | .name | split("/") | last] | join(" ")')
expect_true '[.backups[] | select(.state == "DELETING" and (.name | contains("/daily-")))] | length == 0' \
	"none of r's retained dailies is being deleted (deleting: ${del:-none})"
expect_true '[.backups[] | select(.backupType == "SCHEDULED" and (.name | contains("/daily-"))) | .enforcedRetentionEndTime | length > 0] | all' \
	"r's scheduled dailies carry enforcedRetentionEndTime (dailyBackupImmutable)"

# --- kill -9 of aquiferd: no slot twice, one catch-up ---------------------------
for round in 1 2 3; do
	sleep "0.$((RANDOM % 9 + 1))"
	aq_kill9 "$AQ_PID"
	sleep $((PERIOD * 2))
	aq_start "$D" "$PORT" || exit 1
done
watch_for $((PERIOD * 4))
sk=$(grep -c "backup .* skipped" "$D/aquiferd.log" || true)
expect_eq "across 3 kill -9s no slot was started twice (no skip in the log: its backup would exist already)" 0 "$sk"
aq_req GET "$P/backupVaults/v1/backups?pageSize=1000"
why=$(printf '%s' "$BODY" | jq -r '[.backups[] | select(.state == "ERROR") | (.name | split("/") | last) + ": " + .stateDetails] | join("; ")')
expect_true '[.backups[] | select(.state == "ERROR")] | length == 0' "none failed across the kills${why:+ ($why)}"
for _ in $(seq 100); do
	aq_req GET "$P/backupVaults/v1/backups?pageSize=1000"
	L=$BODY
	[ "$(counts)" = "2 1 1" ] && break
	sleep 0.2
done
expect_eq "after the restarts the policy still keeps 2 daily, 1 weekly, 1 monthly" "2 1 1" "$(counts)"

# --- the policy disabled: no more backups ----------------------------------------
aq_mutate PATCH "$P/backupPolicies/p1?updateMask=enabled" '{"enabled":false}'
expect_true '.done and (has("error") | not)' "p1 disabled"
# what was started before the patch is seen first
watch_for 3
before=$(printf '%s\n' "${!SEEN[@]}" | wc -l)
watch_for $((PERIOD * 3))
after=$(printf '%s\n' "${!SEEN[@]}" | wc -l)
expect_eq "a disabled policy takes no more backups" "$before" "$after"

aq_finish
