#!/usr/bin/env bash
# test_snapshot_schedule.sh: the snapshotPolicy scheduler of aquiferd on its
# test clock (config snapshot-schedule-period = 2: an hour lasts 2 s), with a
# real agent making the snapshots (issue 20, acceptance 3):
#  - hourly snapshotsToKeep 3 keeps exactly 3, named hourly-YYYYMMDD-HHMM;
#  - aquiferd killed (-9) for 4 slots: after the restart one catch-up, no burst;
#  - removing the policy stops it; the kept snapshots stay.
. "$(dirname "$0")/lib.sh"

PERIOD=2
printf 'snapshot-schedule-period = %s\n' "$PERIOD" >"$AQ_TMP/aq.conf"
AQ_SERVE_ARGS=(--config "$AQ_TMP/aq.conf")
aq_start "$AQ_TMP/srv" || exit 1
PORT=$AQ_PORT
TOK=$(aq_token "$AQ_TMP/srv" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=sch" '{}'
P=/v1/projects/sch/locations/east
aq_req POST "$P/storagePools?storagePoolId=pool" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"20480"}'
aq_agent_for east || exit 1

aq_mutate POST "$P/volumes?volumeId=v1" '{"storagePool":"pool","capacityGib":"100","protocols":["NFSV3"],"shareName":"v1",
	"snapshotPolicy":{"enabled":true,"hourlySchedule":{"snapshotsToKeep":3,"minute":0}}}'
expect_true '.done and (has("error") | not)' "a volume with an hourly policy (snapshotsToKeep 3)"

# snaps: the IDs of v1's snapshots that count (not being deleted), sorted
snaps() {
	aq_req GET "$P/volumes/v1/snapshots?pageSize=1000"
	printf '%s' "$BODY" | jq -r '.snapshots // [] | .[] | select(.state != "DELETING") | .name | split("/") | last' | sort
}
declare -A SEEN=()
# watch SECONDS: sample the list every 0.25 s, remembering every ID seen;
# MAXN the most counted at once
watch_for() {
	local end=$((SECONDS + $1)) id
	MAXN=0
	while [ $SECONDS -lt $end ]; do
		mapfile -t cur < <(snaps)
		[ ${#cur[@]} -gt $MAXN ] && MAXN=${#cur[@]}
		for id in "${cur[@]}"; do SEEN[$id]=1; done
		sleep 0.25
	done
}

watch_for $((PERIOD * 8))
ok "the scheduler made snapshots (${#SEEN[@]} seen)" test ${#SEEN[@]} -ge 5
ok "never more than 3 counted at once (at most $MAXN)" test "$MAXN" -le 3
mapfile -t now < <(snaps)
expect_eq "exactly 3 are kept" 3 "${#now[@]}"
bad=$(printf '%s\n' "${!SEEN[@]}" | grep -cvE '^hourly-[0-9]{8,}-[0-9]{4}$')
expect_eq "each is named hourly-YYYYMMDD-HHMM" 0 "$bad"
aq_req GET "$P/volumes/v1/snapshots?pageSize=1000"
expect_true '[.snapshots[] | select(.state == "ERROR")] | length == 0' "none failed"

# --- kill -9 for 4 slots: one catch-up, no burst ----------------------------------
last=$(aq_req GET "$P/volumes/v1/snapshots?pageSize=1000"; printf '%s' "$BODY" | jq -r '.snapshots[].name | split("/") | last' | sort | tail -1)
aq_kill9 "$AQ_PID"
sleep $((PERIOD * 4))
aq_start "$AQ_TMP/srv" "$PORT" || exit 1
new=()
for _ in $(seq 100); do
	mapfile -t new < <(aq_req GET "$P/volumes/v1/snapshots?pageSize=1000"
		printf '%s' "$BODY" | jq -r '.snapshots // [] | .[] | .name | split("/") | last' | sort |
		awk -v l="$last" 'length($0) == length(l) && $0 > l')
	[ ${#new[@]} -gt 0 ] && break
	sleep 0.1
done
ok "after the restart a catch-up snapshot is made (${new[*]:-none})" test ${#new[@]} -ge 1
ok "the 4 missed slots are not replayed in a burst (${#new[@]} new at first sight)" test ${#new[@]} -le 2
watch_for $((PERIOD * 3))
mapfile -t now < <(snaps)
expect_eq "after the restart still exactly 3 are kept" 3 "${#now[@]}"
ok "no more than 3 counted at once after the restart" test "$MAXN" -le 3

# --- the policy removed: no more snapshots ------------------------------------------
aq_mutate PATCH "$P/volumes/v1?updateMask=snapshotPolicy" '{}'
expect_true '.done and (has("error") | not) and (.response | has("snapshotPolicy") | not)' "the policy is removed"
sleep 1
mapfile -t before < <(snaps)
watch_for $((PERIOD * 4))
mapfile -t after < <(snaps)
expect_eq "no snapshot is made once the policy is gone" "${before[*]}" "${after[*]}"
expect_eq "the kept snapshots stay" 3 "${#after[@]}"
aq_req GET "$P/volumes/v1"
expect_true 'has("snapshotPolicy") | not' "the volume reads without a policy"

aq_sanitizer_clean "$AQ_TMP/srv"
aq_finish
