# tests/openapi/record.sh: record HTTP answers for the contract test (sourced).
#
#   source tests/openapi/record.sh
#   body=$(aq_curl_record GET "$url/v1/projects/p/locations/l/volumes" -H "Authorization: Bearer $tok")
#   status=$(aq_last_status)
#
# aq_curl_record METHOD URL [curl args...] runs curl, prints the response
# body on stdout and keeps the HTTP status for aq_last_status (a file, so it
# works when the function runs in $(...)). When AQ_RECORD_DIR is set it also
# writes one JSON file per answer there:
#   {"method": "GET", "path": "/v1/...", "query": "a=b", "status": 200, "body": <JSON or string>}
# tests/openapi/validate.js checks those files against openapi/openapi.yaml.
# Needs curl and jq.

AQ_RECORD_STATUS_FILE=${AQ_RECORD_STATUS_FILE:-$(mktemp "${TMPDIR:-/tmp}/aq-status.XXXXXX")}

aq_last_status() {
	cat "$AQ_RECORD_STATUS_FILE" 2>/dev/null
}

aq_curl_record() {
	local method=$1 url=$2 bodyf status rest path query file
	shift 2
	bodyf=$(mktemp "${TMPDIR:-/tmp}/aq-body.XXXXXX")
	status=$(curl -sS -X "$method" -o "$bodyf" -w '%{http_code}' "$@" "$url") || status=000
	printf '%s' "$status" > "$AQ_RECORD_STATUS_FILE"
	if [ -n "${AQ_RECORD_DIR:-}" ] && [ "$status" != 000 ]; then
		mkdir -p "$AQ_RECORD_DIR"
		rest=${url#*://}
		rest=/${rest#*/}
		path=${rest%%\?*}
		query=
		[ "$path" != "$rest" ] && query=${rest#*\?}
		file=$(mktemp "$AQ_RECORD_DIR/$(date +%s%N)-XXXXXX.json")
		if jq -e . "$bodyf" >/dev/null 2>&1; then
			jq -n --arg m "$method" --arg p "$path" --arg q "$query" --argjson s "$status" \
				--slurpfile b "$bodyf" '{method: $m, path: $p, query: $q, status: $s, body: $b[0]}' > "$file"
		else
			jq -n --arg m "$method" --arg p "$path" --arg q "$query" --argjson s "$status" \
				--rawfile b "$bodyf" '{method: $m, path: $p, query: $q, status: $s, body: $b}' > "$file"
		fi
	fi
	cat "$bodyf"
	rm -f "$bodyf"
}
