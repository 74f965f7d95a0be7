#!/usr/bin/env bash
# test_cli_gcloud.sh: the aquifer CLI keeps gcloud's habits (issue 17), against
# a real aquiferd and a real aquifer-agent on loopback:
#  1. every flag (--format, --filter, --sort-by, ...) is checked before anything
#     is sent: a bad one exits 2 and changes nothing;
#  2. deletes ask on a terminal (--quiet/-q skips it; stdin not a terminal takes
#     gcloud's default answer, yes);
#  3. --format projections and transforms, --filter operators, --sort-by;
#  and the later bullets of the issue's "CLI (gcloud habits)" section.
. "$(dirname "$0")/lib.sh"
D=$AQ_TMP/srv
aq_cli_start "$D"
P=/v1/projects/acme/locations/east
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
aq_agent_start "$D" n1 east "$AQ_TMP/shelf" "$(aq_join_token east)" 10000 || exit 1

# has DESC TEXT HAYSTACK
has() {
	case "$3" in
	*"$2"*) aq_pass "$1" ;;
	*) aq_failed "$1" "lacks: $2" "in:    ${3:0:600}" ;;
	esac
}

aq_cli 0 "create pool sp" storage-pools create sp --capacity=4TiB --service-level=premium --format='value(name)'
VOLFLAGS=(--storage-pool=sp --capacity=100 --protocols=nfsv3 --share-name)

# --- 1. flags are checked before anything is sent -------------------------------
aq_cli 2 "volumes create with a bad --format is a usage error" volumes create vbad "${VOLFLAGS[@]}" vbad --format=bogus
has "the error names the format" "bogus" "$ERR"
aq_req GET "$P/volumes/vbad"
expect_status 404 "a bad --format creates nothing"
aq_cli 2 "a bad --format on update" storage-pools update sp --description=changed --format='value(name'
aq_req GET "$P/storagePools/sp"
expect_jq '.description // ""' "" "a refused update changes nothing"
aq_cli 2 "a bad --filter on list is refused" volumes list --filter='name'
aq_cli 2 "a bad --sort-by is refused" volumes list --sort-by='~'
aq_cli 2 "--limit=0 is refused" volumes list --limit=0
aq_cli 2 "--page-size=-1 is refused" volumes list --page-size=-1
aq_cli 2 "a bad --format on delete" storage-pools delete sp --format='table(x'
aq_req GET "$P/storagePools/sp"
expect_status 200 "a delete with a bad --format deletes nothing"

# --- 2. deletes ask on a terminal ---------------------------------------------
aq_cli 0 "create volume vq" volumes create vq "${VOLFLAGS[@]}" vq --format='value(state)'
has "create progress on stderr" "Creating volume vq...done." "$ERR"
has "the resource on stdout" "READY" "$OUT"
if command -v script >/dev/null; then
	# script(1) gives aquifer a terminal on stdin and types what it reads
	printf 'n\n' | timeout 60 script -qec "$AQUIFER volumes delete vq" /dev/null >"$AQ_TMP/tty" 2>&1
	expect_eq "answering n on a terminal exits 1" 1 "$?"
	has "the terminal shows gcloud's prompt" "Do you want to continue (Y/n)?" "$(cat "$AQ_TMP/tty")"
	aq_req GET "$P/volumes/vq"
	expect_status 200 "answering n deletes nothing"
	printf 'y\n' | timeout 60 script -qec "$AQUIFER volumes delete vq" /dev/null >"$AQ_TMP/tty" 2>&1
	expect_eq "answering y on a terminal exits 0" 0 "$?"
	aq_req GET "$P/volumes/vq"
	expect_status 404 "answering y deletes the volume"
	aq_cli 0 "create volume vq again" volumes create vq "${VOLFLAGS[@]}" vq
	printf 'n\n' | timeout 60 script -qec "$AQUIFER volumes delete vq -q" /dev/null >"$AQ_TMP/tty" 2>&1
	expect_eq "-q on a terminal does not ask" 0 "$?"
	aq_req GET "$P/volumes/vq"
	expect_status 404 "-q deletes without asking"
	aq_cli 0 "create volume vq a third time" volumes create vq "${VOLFLAGS[@]}" vq
else
	echo "# script(1) missing: the terminal prompt is covered by tests/cli/test_cli_wait only"
fi
aq_cli 0 "stdin not a terminal: gcloud's default answer (yes), no prompt" volumes delete vq
case "$ERR" in *"continue"*) aq_failed "no prompt without a terminal" "$ERR" ;; *) aq_pass "no prompt without a terminal" ;; esac
aq_req GET "$P/volumes/vq"
expect_status 404 "the volume is gone"

# --- 3. --format, --filter, --sort-by as gcloud's ------------------------------
aq_cli 2 "an unknown field in --format on create is refused before sending" volumes create vbad "${VOLFLAGS[@]}" vbad --format='value(nmae)'
has "the error names the field" "unknown field 'nmae' in --format" "$ERR"
aq_req GET "$P/volumes/vbad"
expect_status 404 "an unknown --format field creates nothing"
aq_cli 2 "an unknown transform on update is refused" storage-pools update sp --description=changed --format='value(name.nosuch())'
has "the error names the transform" "unknown transform 'nosuch()'" "$ERR"
aq_req GET "$P/storagePools/sp"
expect_jq '.description // ""' "" "an unknown transform changes nothing"
aq_cli 0 "create w1" volumes create w1 --storage-pool=sp --capacity=100 --protocols=nfsv3 --share-name=w1 --labels=env=dev
aq_cli 0 "create w2" volumes create w2 --storage-pool=sp --capacity=200 --protocols=nfsv3 --share-name=w2 --labels=env=prod
aq_cli 0 "csv with a label" volumes list --format='csv(name.basename(),capacityGib:label=CAP)' --sort-by=name
expect_eq "csv output" "$(printf 'name,CAP\nw1,100\nw2,200')" "$OUT"
aq_cli 0 "table(f:label=X)" volumes list --format='table(name.basename():label=VOL,labels.env)' --sort-by='~capacityGib'
expect_eq "table with labels" "$(printf 'VOL  ENV\nw2   prod\nw1   dev')" "$OUT"
aq_cli 0 "json projection" volumes describe w1 --format='json(name.basename(),capacityGib)'
expect_eq "json(...) keeps only the fields" '{"name":"w1","capacityGib":"100"}' "$(printf '%s' "$OUT" | jq -c .)"
aq_cli 0 "yaml projection" volumes describe w2 --format='yaml(labels)'
expect_eq "yaml(...)" "$(printf 'labels:\n  env: prod')" "$OUT"
aq_cli 0 "flattened" volumes describe w1 --format='flattened(labels,shareName)'
expect_eq "flattened" "$(printf 'labels.env: dev\nshareName:  w1')" "$OUT"
TZ=UTC aq_cli 0 ".date()" volumes describe w1 --format="value(createTime.date('%Y'),createTime)"
expect_eq ".date(%Y) is the createTime's year (UTC)" "$(printf '%s' "$OUT" | cut -f2 | cut -c1-4)" "$(printf '%s' "$OUT" | cut -f1)"
aq_cli 0 "filter >" volumes list --filter='capacityGib>150' --format='value(name.basename())'
expect_eq "capacityGib>150" "w2" "$OUT"
aq_cli 0 "filter < OR :" volumes list --filter='capacityGib<150 OR labels.env:pro' --format='value(name.basename())' --sort-by=name
expect_eq "OR" "$(printf 'w1\nw2')" "$OUT"
aq_cli 0 "filter NOT" volumes list --filter='NOT labels.env=dev' --format='value(name.basename())'
expect_eq "NOT" "w2" "$OUT"
# the examples of cli/README.md, as written there
TZ=UTC aq_cli 0 "cli/README.md's table example" volumes list --format='table(name.basename():label=VOLUME,capacityGib,createTime.date(%Y-%m-%d))' --sort-by=name
day() { aq_req GET "$P/volumes/$1"; printf '%s' "$BODY" | jq -r '.createTime[0:10]'; }
expect_eq "its output" "$(printf 'VOLUME  CAPACITY_GIB  CREATE_TIME\nw1      100           %s\nw2      200           %s' "$(day w1)" "$(day w2)")" "$OUT"
aq_cli 0 "cli/README.md's filter example" volumes list --filter='capacityGib>=1024 AND NOT labels.env:dev'
has "nothing that large" "Listed 0 items." "$ERR"
aq_cli 0 "the filter example, smaller" volumes list --filter='capacityGib>=150 AND NOT labels.env:dev' --format='value(name.basename())'
expect_eq "w2 only" "w2" "$OUT"
aq_cli 2 "AND and OR need parentheses" volumes list --filter='name=w1 OR name=w2 capacityGib>1'
aq_cli 2 "an unknown --filter field" volumes list --filter='nmae=w1'
has "names it" "unknown field 'nmae' in --filter" "$ERR"
aq_cli 2 "an unknown --sort-by field" volumes list --sort-by=capacty
aq_cli 0 "--sort-by a column header" volumes list --sort-by='~NAME' --format='value(name.basename())'
expect_eq "sorted by the NAME column, descending" "$(printf 'w2\nw1')" "$OUT"
aq_cli 2 "no table for nodes: an unknown field is checked against the answer" nodes list --format='value(nosuch)'
has "names it" "unknown field 'nosuch'" "$ERR"
aq_cli 0 "a node field the answer has" nodes list --format='value(name.basename(),state)'
expect_eq "nodes value" "$(printf 'n1\tREADY')" "$OUT"

# --- 4. label flags, --network, --uri, update --help -------------------------------
labels_of() { aq_req GET "$P/volumes/$1"; printf '%s' "$BODY" | jq -c '.labels // {}'; }
aq_cli 0 "--update-labels adds and changes" volumes update w1 --update-labels=team=db,env=qa
expect_eq "labels merged" '{"env":"qa","team":"db"}' "$(labels_of w1)"
aq_cli 0 "--remove-labels" volumes update w1 --remove-labels=team,absent
expect_eq "team removed, absent ignored" '{"env":"qa"}' "$(labels_of w1)"
aq_cli 0 "--update-labels is applied before --remove-labels" volumes update w1 --update-labels=x=1,y=2 --remove-labels=x
expect_eq "x updated then removed" '{"env":"qa","y":"2"}' "$(labels_of w1)"
aq_cli 0 "--clear-labels with --update-labels" volumes update w1 --clear-labels --update-labels=only=1
expect_eq "only the new label" '{"only":"1"}' "$(labels_of w1)"
aq_cli 0 "--clear-labels" volumes update w1 --clear-labels --format='value(name.basename())'
expect_eq "no label left" '{}' "$(labels_of w1)"
aq_cli 2 "--clear-labels with --remove-labels is refused" volumes update w2 --clear-labels --remove-labels=env
expect_eq "w2 keeps its labels" '{"env":"prod"}' "$(labels_of w2)"
aq_cli 2 "--labels is for create (update has gcloud's three)" volumes update w2 --labels=a=b
aq_cli 0 "--network=name=N,psa-range=R" storage-pools create sp2 --capacity=2TiB --service-level=standard \
	--network=name=vpc1,psa-range=10.10.0.0/16 --format='value(network,psaRange)'
expect_eq "network as a resource name, psaRange stored" "$(printf 'projects/acme/global/networks/vpc1\t10.10.0.0/16')" "$OUT"
aq_cli 0 "the default network" storage-pools describe sp --format='value(network)'
expect_eq "network default" "projects/acme/global/networks/default" "$OUT"
aq_cli 2 "--network without name= is refused" storage-pools create sp3 --capacity=2TiB --service-level=standard --network=vpc1
aq_cli 0 "--uri" volumes list --uri --sort-by=name
expect_eq "resource URIs" "$(printf '%s\n%s' "$AQ_URL/v1/projects/acme/locations/east/volumes/w1" "$AQ_URL/v1/projects/acme/locations/east/volumes/w2")" "$OUT"
aq_cli 2 "--uri with --format is refused" volumes list --uri --format=json
for g in volumes storage-pools locations; do
	aq_cli 0 "$g update --help" $g update --help
	has "$g update offers --update-labels" "--update-labels" "$OUT"
	case "$OUT" in
	*"--service-level"* | *"--protocols"* | *"--share-name"* | *"--network"* | *"--labels="*)
		aq_failed "$g update --help offers only what can be updated" "$OUT" ;;
	*) aq_pass "$g update --help offers only what can be updated" ;;
	esac
done

# --- 5. volumes metrics: a readable table by default ---------------------------
for _ in $(seq 50); do
	aq_req GET "$P/volumes/w1/metrics?window=90s"
	[ "$(printf '%s' "$BODY" | jq '.points | length')" -gt 0 ] && break
	sleep 0.2
done
aq_cli 0 "volumes metrics" volumes metrics w1 --window=90s
has "the table's header" "TIME      READ_MIB/S  WRITE_MIB/S  LIMIT_MIB/S  P99_MS  USED" "$OUT"
LIMIT=$(printf '%s' "$BODY" | jq -r '.points[-1].throughputLimitMibps')
has "the limit, two decimals" "$(printf '%.2f' "$LIMIT")" "$OUT"
aq_cli 0 "volumes metrics --format=json is the answer itself" volumes metrics w1 --window=90s --format=json
expect_eq "json has the points" true "$(printf '%s' "$OUT" | jq '.points | length > 0')"

# --- 6. error hints name aquifer commands, not HTTP routes ------------------------
aq_cli 3 "a node that holds volumes is not deleted" nodes delete n1
has "the hint is the drain command" "drain it (aquifer nodes drain n1)" "$ERR"
case "$ERR" in *"/v1/"*) aq_failed "no HTTP route in the hint" "$ERR" ;; *) aq_pass "no HTTP route in the hint" ;; esac
aq_req POST "/v1/locations?locationId=west" '{}'
JT=$(aq_join_token west)
curl -s -o /dev/null -H "Authorization: Bearer $JT" -X POST "$AQ_URL/v1/agent/join" \
	-d '{"node":"w9","location":"west","address":"http://127.0.0.1:9","nfsAddress":"127.0.0.9:2049","agentVersion":"e2e-fake"}'
aq_cli 3 "a location with nodes is not deleted" locations delete west
has "the hint is the nodes delete command" "drain and delete them first (aquifer nodes delete NAME)" "$ERR"
AQUIFER_TOKEN=not-a-token aq_cli 3 "a wrong token" volumes list
has "UNAUTHENTICATED" "UNAUTHENTICATED" "$ERR"
has "the hint is aquifer auth login" "aquifer auth login --token=TOKEN" "$ERR"

# --- 7. operations list shows failures; operations cancel says what happened ------------
# w9 (west) never applies anything: a volume create there keeps running until cancelled
aq_cli 0 "a pool in west" storage-pools create spw --location=west --capacity=2TiB --service-level=premium
aq_cli 0 "a volume create that waits for its node" volumes create vc --location=west --storage-pool=spw \
	--capacity=100 --protocols=nfsv3 --share-name=vc --async --format='value(name)'
OP=$OUT
aq_cli 0 "operations cancel" operations cancel "$OP"
has "the progress line" "Cancelling operation" "$ERR"
has "what happened, in words" "Operation $(basename "$OP") (create of volumes/vc) ended CANCELLED: cancelled: the create was rolled back" "$ERR"
has "the operation, as it ended, on stdout" "code: 1" "$OUT"
aq_cli 0 "operations list" operations list --location=west
has "an ERROR column" "ERROR" "$(printf '%s' "$OUT" | head -1)"
has "the failure's message in the row" "cancelled: the create was rolled back" "$(printf '%s' "$OUT" | grep "$(basename "$OP")")"
aq_cli 3 "cancelling a done operation says why" operations cancel "$OP"
has "the server's reason" "already done" "$ERR"

aq_finish
