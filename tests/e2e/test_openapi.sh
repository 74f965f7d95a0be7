#!/usr/bin/env bash
# tests/e2e/test_openapi.sh: the published contract.
#  - openapi/openapi.yaml is what openapi/gen-spec.js makes from the field tables,
#    and openapi/docs.html what openapi/gen-docs.js makes from the spec;
#  - `redocly lint` passes (rules in openapi/redocly.yaml);
#  - route parity: every `aquiferd routes` line is in the spec and the reverse;
#  - a real aquiferd serves the spec at /v1/openapi.yaml and the HTML at /docs/,
#    with no script or stylesheet loaded from the network;
#  - tests/openapi/validate.js accepts recorded answers and rejects bad ones.
. "$(dirname "$0")/../openapi/lib.sh"

aq_npm_setup
OA=$AQ_SRC/openapi
SPEC=$OA/openapi.yaml

# 1. Generated files are up to date.
node "$OA/gen-spec.js" >"$AQ_TMP/openapi.yaml" 2>"$AQ_TMP/gen.err" || cat "$AQ_TMP/gen.err"
if cmp -s "$AQ_TMP/openapi.yaml" "$SPEC"; then ok "spec up to date"; else
	fail "openapi/openapi.yaml differs from gen-spec.js output (run: cd openapi && npm run gen)"
	diff -u "$SPEC" "$AQ_TMP/openapi.yaml" | head -40
fi
node "$OA/gen-docs.js" "$SPEC" "$AQ_TMP/docs.html"
check "docs.html up to date with the spec (run: cd openapi && npm run gen)" cmp -s "$AQ_TMP/docs.html" "$OA/docs.html"
sha=$(sha256sum "$SPEC" | cut -d' ' -f1)
check "docs.html records the spec's sha256" grep -q "name=\"aquifer-spec-sha256\" content=\"$sha\"" "$OA/docs.html"
check "docs.html loads nothing from the network" bash -c "! grep -Eiq '<(script|link|img|iframe)[^>]+(src|href)=\"(https?:)?//' '$OA/docs.html'"

# 2. Lint.
if (cd "$OA" && "$AQ_NODE_MODULES/.bin/redocly" lint --config redocly.yaml openapi.yaml >"$AQ_TMP/lint.log" 2>&1); then
	ok "redocly lint"
else
	fail "redocly lint"
	tail -40 "$AQ_TMP/lint.log"
fi

# 3. Route parity: aquiferd routes <-> spec paths (path parameter {x} <-> *).
# Neither side may be empty or name a route twice (sorted, not deduplicated:
# a duplicate row would otherwise vanish into its twin).
"$AQUIFERD" routes | LC_ALL=C sort >"$AQ_TMP/routes.server"
node -e '
const y = require("js-yaml"), fs = require("fs");
const s = y.load(fs.readFileSync(process.argv[1], "utf8"));
for (const [p, item] of Object.entries(s.paths))
  for (const m of Object.keys(item))
    if (["get","put","post","delete","patch","head","options","trace"].includes(m))
      console.log(m.toUpperCase() + " " + p.replace(/\{[^}]+\}/g, "*"));
' "$SPEC" | LC_ALL=C sort >"$AQ_TMP/routes.spec"
check "server has routes" test -s "$AQ_TMP/routes.server"
check "spec has routes" test -s "$AQ_TMP/routes.spec"
for side in server spec; do
	dups=$(LC_ALL=C uniq -d "$AQ_TMP/routes.$side")
	[ -z "$dups" ] && ok "no $side route is listed twice" || fail "$side routes listed twice:" "$dups"
done
only_server=$(LC_ALL=C comm -23 "$AQ_TMP/routes.server" "$AQ_TMP/routes.spec")
only_spec=$(LC_ALL=C comm -13 "$AQ_TMP/routes.server" "$AQ_TMP/routes.spec")
[ -z "$only_server" ] && ok "every server route is in the spec" || fail "routes missing from the spec:" "$only_server"
[ -z "$only_spec" ] && ok "every spec route is served" || fail "spec routes the server does not serve:" "$only_spec"

# 4. A real aquiferd serves both documents.
aq_start
export AQ_RECORD_DIR=$AQ_TMP/records
curl -sS -D "$AQ_TMP/h1" -o "$AQ_TMP/served.yaml" "$AQ_URL/v1/openapi.yaml"
check "GET /v1/openapi.yaml returns the spec byte for byte" cmp -s "$AQ_TMP/served.yaml" "$SPEC"
check "GET /v1/openapi.yaml is application/yaml" grep -qi '^content-type: application/yaml' "$AQ_TMP/h1"
# Known server bug: the router never matches a path ending in "/" (seg_match
# refuses the empty last segment), so GET /docs/ answers 404. Counted as an
# expected failure; once the server serves the page this turns into a failure
# ("fixed") so the marker gets removed.
DOCS_XFAIL=${DOCS_XFAIL:-0}
curl -sS -D "$AQ_TMP/h2" -o "$AQ_TMP/served.html" "$AQ_URL/docs/"
if cmp -s "$AQ_TMP/served.html" "$OA/docs.html" && grep -qi '^content-type: text/html' "$AQ_TMP/h2"; then
	if [ "$DOCS_XFAIL" = 1 ]; then
		fail "GET /docs/ now works: set DOCS_XFAIL=0 in tests/e2e/test_openapi.sh"
	else
		ok "GET /docs/ returns docs.html as text/html"
	fi
	aq_curl_record GET "$AQ_URL/docs/" >/dev/null
elif [ "$DOCS_XFAIL" = 1 ]; then
	echo "XFAIL: GET /docs/ -> $(head -n1 "$AQ_TMP/h2" | tr -d '\r') (server router bug, see test comment)"
	ok "GET /docs/ (expected failure)"
else
	fail "GET /docs/ returns docs.html as text/html" "$(head -n1 "$AQ_TMP/h2")"
fi

# Answers of the open and error paths, recorded for the contract check.
aq_curl_record GET "$AQ_URL/healthz" >/dev/null
aq_curl_record GET "$AQ_URL/metrics" >/dev/null
aq_curl_record GET "$AQ_URL/v1/openapi.yaml" >/dev/null
aq_curl_record GET "$AQ_URL/v1/projects" >/dev/null
check "no token -> 401" test "$(aq_last_status)" = 401
aq_curl_record GET "$AQ_URL/v1/projects" -H "Authorization: Bearer not-a-jwt" >/dev/null
check "bad token -> 401" test "$(aq_last_status)" = 401
admin=$(aq_token admin)
A=(-H "Authorization: Bearer $admin")
aq_curl_record POST "$AQ_URL/v1/projects?projectId=docs-p" "${A[@]}" -d '{"displayName":"Docs"}' >/dev/null
check "create project -> 200" test "$(aq_last_status)" = 200
aq_curl_record POST "$AQ_URL/v1/locations?locationId=us-east1" "${A[@]}" -d '{}' >/dev/null
check "create location -> 200" test "$(aq_last_status)" = 200
aq_curl_record GET "$AQ_URL/v1/projects" "${A[@]}" >/dev/null
aq_curl_record GET "$AQ_URL/v1/projects/docs-p" "${A[@]}" >/dev/null
aq_curl_record GET "$AQ_URL/v1/locations" "${A[@]}" >/dev/null
aq_curl_record GET "$AQ_URL/v1/locations/us-east1" "${A[@]}" >/dev/null
aq_curl_record GET "$AQ_URL/v1/projects/docs-p/locations" "${A[@]}" >/dev/null
aq_curl_record GET "$AQ_URL/v1/projects/docs-p/locations/us-east1" "${A[@]}" >/dev/null
check "project location get -> 200" test "$(aq_last_status)" = 200
aq_curl_record GET "$AQ_URL/v1/projects/docs-p/locations/us-east1/operations" "${A[@]}" >/dev/null
viewer=$(aq_token viewer docs-p)
aq_curl_record POST "$AQ_URL/v1/projects/docs-p/locations/us-east1/storagePools?storagePoolId=x" \
	-H "Authorization: Bearer $viewer" -d '{}' >/dev/null
check "viewer create -> 403" test "$(aq_last_status)" = 403
aq_curl_record GET "$AQ_URL/v1/projects/docs-p/locations/us-east1/storagePools?pageSize=-1" "${A[@]}" >/dev/null
check "bad pageSize -> 400" test "$(aq_last_status)" = 400
head -c 1100000 /dev/zero | tr '\0' ' ' >"$AQ_TMP/big"
aq_curl_record POST "$AQ_URL/v1/projects/docs-p/locations/us-east1/storagePools?storagePoolId=big" "${A[@]}" \
	--data-binary "@$AQ_TMP/big" >/dev/null
check "body over 1 MiB -> 413" test "$(aq_last_status)" = 413
aq_curl_record DELETE "$AQ_URL/v1/projects/docs-p/locations/us-east1/operations/nope" "${A[@]}" >/dev/null
check "delete unknown operation -> 404" test "$(aq_last_status)" = 404
aq_curl_record POST "$AQ_URL/v1/projects/docs-p/locations/us-east1/operations/nope:cancel" "${A[@]}" >/dev/null
check "cancel unknown operation -> 404" test "$(aq_last_status)" = 404
aq_curl_record DELETE "$AQ_URL/v1/locations/us-east1" "${A[@]}" >/dev/null
check "delete location -> 200" test "$(aq_last_status)" = 200
aq_curl_record DELETE "$AQ_URL/v1/projects/docs-p" "${A[@]}" >/dev/null
check "delete project -> 200" test "$(aq_last_status)" = 200

# 5. The contract check passes on these answers...
if node "$AQ_SRC/tests/openapi/validate.js" --spec "$SPEC" "$AQ_RECORD_DIR" >"$AQ_TMP/validate.log" 2>&1; then
	ok "recorded answers match the spec"
else
	fail "recorded answers match the spec"
	cat "$AQ_TMP/validate.log"
fi
# ...and fails on answers that break it.
mkdir -p "$AQ_TMP/bad"
cat >"$AQ_TMP/bad/1.json" <<'JSON'
{"method":"GET","path":"/v1/projects/p/locations/l/storagePools/sp","status":200,
 "body":{"name":"projects/p/locations/l/storagePools/sp","serviceLevel":"PREMIUM","capacityGib":2048,"bogus":1}}
JSON
cat >"$AQ_TMP/bad/2.json" <<'JSON'
{"method":"GET","path":"/v1/projects/p/locations/l/volumes/v","status":418,"body":{}}
JSON
cat >"$AQ_TMP/bad/3.json" <<'JSON'
{"method":"GET","path":"/v1/projects/p/locations/l/operations/o","status":200,
 "body":{"name":"projects/p/locations/l/operations/o","done":true,"metadata":{"@type":"type.googleapis.com/google.cloud.netapp.v1.OperationMetadata","createTime":"2026-01-01T00:00:00Z","target":"t","verb":"create"}}}
JSON
cat >"$AQ_TMP/bad/4.json" <<'JSON'
{"method":"PUT","path":"/v1/projects/p/locations/l/volumes/v","status":200,"body":{}}
JSON
node "$AQ_SRC/tests/openapi/validate.js" --spec "$SPEC" "$AQ_TMP/bad" >"$AQ_TMP/bad.log" 2>&1
rc=$?
check "validate.js fails on bad answers" test "$rc" = 1
check "validate.js lists all four mismatches" test "$(grep -c '^MISMATCH' "$AQ_TMP/bad.log")" = 4
check "validate.js names the int64-as-number and unknown field" grep -q 'capacityGib must be string' "$AQ_TMP/bad.log"
check "validate.js names the unknown field" grep -q 'bogus' "$AQ_TMP/bad.log"
[ "$AQ_FAIL" -eq 0 ] || cat "$AQ_TMP/bad.log"

aq_finish
