# tests/e2e/api_lib.sh: the preamble test_api.sh and test_api_access.sh
# share (sourced after lib.sh): one aquiferd in $AQ_TMP/srv with an admin
# token in TOK, the names P, L, PL, and the body builders and counters.
D=$AQ_TMP/srv
aq_start "$D" || { aq_failed "aquiferd starts"; aq_finish; }
ADMIN=$(aq_token "$D" admin)
TOK=$ADMIN

P=proj-a
L=us-east1
PL=/v1/projects/$P/locations/$L

pool_body() { # LEVEL CAPACITY_GIB [extra json members]
	printf '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"%s","capacityGib":"%s"%s}' "$1" "$2" "${3:+,$3}"
}
vol_body() { # POOL CAPACITY_GIB SHARE [extra json members]
	printf '{"storagePool":"%s","capacityGib":"%s","shareName":"%s","protocols":["NFSV3"]%s}' \
		"$1" "$2" "$3" "${4:+,$4}"
}
# count PATH PLURAL: how many items a collection holds (all pages).
count() {
	local n
	n=$(aq_list_all "$1" "$2" | wc -l) || n=err
	echo "$n"
}
