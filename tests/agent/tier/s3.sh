# tests/agent/tier/s3.sh: an S3-API server (s3rver from npm) and the latency proxy
# (tests/fixtures/aq-latproxy) for the cold-tier tests and bench/tier (sourced).
#
# Works under set -e. Needs AQ_SRC (the source tree); aq_proxy_start needs AQ_LATPROXY (the
# aq-latproxy binary; default $AQ_BUILDDIR/tests/fixtures/aq-latproxy).
# s3rver has one account: access key "S3RVER", secret "S3RVER"
# (AQ_S3_ACCESS_KEY / AQ_S3_SECRET_KEY).
# s3rver 3.7 does NOT verify SigV4 signatures (only that the access key
# exists: another key gets 403 InvalidAccessKeyId), so tests check the
# signature headers through aq-latproxy's --log instead.
#
#   aq_s3_setup              npm ci s3rver once per lockfile into the cache
#                            (tests/agent/tier/package*.json); sets AQ_S3RVER
#   aq_s3_start DIR [PORT]   start s3rver on 127.0.0.1:PORT (default: a free
#                            port) with its data in DIR, wait until it
#                            answers; sets AQ_S3_PID, AQ_S3_PORT, AQ_S3_ENDPOINT
#   aq_s3_stop               stop it (by PID) and wait for it
#   aq_s3lite_start DIR [PORT]   start aq-s3lite (tests/fixtures/aq-s3lite:
#                            a fast S3-API server that VERIFIES SigV4) on
#                            127.0.0.1:PORT (default: a free port) over
#                            DIR/data, log in DIR/s3lite.log; sets AQ_S3_PID,
#                            AQ_S3_PORT, AQ_S3_ENDPOINT like aq_s3_start and
#                            exports AQ_S3_ACCESS_KEY / AQ_S3_SECRET_KEY
#                            (AQ-S3LITE-KEY / its own secret). Needs
#                            AQ_S3LITE or $AQ_BUILDDIR/tests/fixtures/aq-s3lite.
#                            aq_s3_stop / pause / resume / cleanup work on it.
#                            AQ_S3LITE_ARGS: more flags, e.g. "--log FILE".
#                            (It overwrites the S3RVER values: set them back
#                            before aq_s3_start in the same shell.)
#   aq_s3_pause / aq_s3_resume   SIGSTOP / SIGCONT: a store that accepts
#                            connections but never answers
#   aq_proxy_start TO_PORT LATENCY_MS [LOG]   start aq-latproxy in front of
#                            127.0.0.1:TO_PORT; sets AQ_PROXY_PID,
#                            AQ_PROXY_PORT, AQ_PROXY_ENDPOINT
#   aq_proxy_down / aq_proxy_up   switch the proxy's "down" mode (SIGUSR1):
#                            new connections refused, open ones dropped
#   aq_proxy_stop
#   aq_s3_cleanup            stop whatever of the above still runs (put it
#                            in the caller's EXIT trap)

# shellcheck source=../../openapi/npm.sh
. "$AQ_SRC/tests/openapi/npm.sh"

AQ_S3_ACCESS_KEY=S3RVER
AQ_S3_SECRET_KEY=S3RVER
AQ_S3_PID=
AQ_PROXY_PID=

_aq_s3_port_free() {
	! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

_aq_s3_pick_port() {
	local p
	for _ in $(seq 100); do
		p=$((10000 + RANDOM % 22000)) # below the ephemeral range
		if _aq_s3_port_free "$p"; then echo "$p"; return 0; fi
	done
	return 1
}

aq_s3_setup() {
	command -v node >/dev/null 2>&1 || { echo "$(basename "$0"): node is required (deploy/deps.sh test)" >&2; exit 99; }
	aq_npm_install "$AQ_SRC/tests/agent/tier"
	AQ_S3RVER=$AQ_NPM_DIR/node_modules/.bin/s3rver
}

# _aq_wait_http URL PID: until URL answers anything (max ~15 s) while PID lives.
_aq_wait_http() {
	for _ in $(seq 150); do
		kill -0 "$2" 2>/dev/null || return 1
		curl -s -o /dev/null --max-time 1 "$1" && return 0
		sleep 0.1
	done
	return 1
}

aq_s3_start() {
	local dir=$1 port=${2:-}
	[ -n "${AQ_S3RVER:-}" ] || aq_s3_setup
	mkdir -p "$dir/data"
	[ -n "$port" ] || port=$(_aq_s3_pick_port) || return 1
	# s3rver's ListObjectsV2 continuation tokens use DES, which OpenSSL 3
	# only has in its legacy provider: without it every paged list is a 500.
	NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--openssl-legacy-provider" \
		"$AQ_S3RVER" -d "$dir/data" -a 127.0.0.1 -p "$port" --silent >>"$dir/s3rver.log" 2>&1 &
	AQ_S3_PID=$!
	AQ_S3_PORT=$port
	AQ_S3_ENDPOINT=http://127.0.0.1:$port
	if ! _aq_wait_http "$AQ_S3_ENDPOINT/" "$AQ_S3_PID"; then
		echo "s3rver did not start on $AQ_S3_ENDPOINT:" >&2
		tail -20 "$dir/s3rver.log" >&2
		aq_s3_stop
		return 1
	fi
}

aq_s3lite_start() {
	local dir=$1 port=${2:-} tries
	local bin=${AQ_S3LITE:-${AQ_BUILDDIR:-$AQ_SRC}/tests/fixtures/aq-s3lite}
	[ -x "$bin" ] || { echo "no aq-s3lite at $bin (make first, or set AQ_S3LITE)" >&2; return 1; }
	mkdir -p "$dir/data"
	export AQ_S3_ACCESS_KEY=AQ-S3LITE-KEY
	export AQ_S3_SECRET_KEY=aq-s3lite-secret/Only+For+Loopback
	for tries in 1 2 3 4 5; do
		[ -n "${2:-}" ] || port=$(_aq_s3_pick_port) || return 1
		# shellcheck disable=SC2086 # AQ_S3LITE_ARGS: extra flags, split on purpose
		"$bin" --listen "127.0.0.1:$port" --root "$dir/data" --access-key "$AQ_S3_ACCESS_KEY" \
			--secret-key "$AQ_S3_SECRET_KEY" ${AQ_S3LITE_ARGS:-} >>"$dir/s3lite.log" 2>&1 &
		AQ_S3_PID=$!
		AQ_S3_PORT=$port
		AQ_S3_ENDPOINT=http://127.0.0.1:$port
		if _aq_wait_http "$AQ_S3_ENDPOINT/" "$AQ_S3_PID"; then
			return 0
		fi
		aq_s3_stop
		[ -z "${2:-}" ] || break  # the caller's port: no other to try
	done
	echo "aq-s3lite did not start on 127.0.0.1:$port:" >&2
	tail -20 "$dir/s3lite.log" >&2
	return 1
}

aq_s3_stop() {
	[ -n "${AQ_S3_PID:-}" ] || return 0
	kill -CONT "$AQ_S3_PID" 2>/dev/null || true
	kill "$AQ_S3_PID" 2>/dev/null || true
	wait "$AQ_S3_PID" 2>/dev/null || true
	AQ_S3_PID=
}

aq_s3_pause() { kill -STOP "$AQ_S3_PID"; }
aq_s3_resume() { kill -CONT "$AQ_S3_PID"; }

aq_proxy_start() {
	local to=$1 lat=$2 log=${3:-} port tries
	local bin=${AQ_LATPROXY:-${AQ_BUILDDIR:-$AQ_SRC}/tests/fixtures/aq-latproxy}
	[ -x "$bin" ] || { echo "no aq-latproxy at $bin (make first, or set AQ_LATPROXY)" >&2; return 1; }
	for tries in 1 2 3 4 5; do
		port=$(_aq_s3_pick_port) || return 1
		if [ -n "$log" ]; then
			"$bin" --listen "127.0.0.1:$port" --to "127.0.0.1:$to" --latency-ms "$lat" --log "$log" &
		else
			"$bin" --listen "127.0.0.1:$port" --to "127.0.0.1:$to" --latency-ms "$lat" &
		fi
		AQ_PROXY_PID=$!
		for _ in $(seq 50); do
			kill -0 "$AQ_PROXY_PID" 2>/dev/null || break
			if ! _aq_s3_port_free "$port"; then
				AQ_PROXY_PORT=$port
				AQ_PROXY_ENDPOINT=http://127.0.0.1:$port
				return 0
			fi
			sleep 0.05
		done
		aq_proxy_stop  # lost the port to someone else: try another
	done
	return 1
}

# Each returns once the port is closed / open again (max ~5 s).
aq_proxy_down() {
	kill -USR1 "$AQ_PROXY_PID" || return 1
	for _ in $(seq 100); do _aq_s3_port_free "$AQ_PROXY_PORT" && return 0; sleep 0.05; done
	return 1
}
aq_proxy_up() {
	kill -USR1 "$AQ_PROXY_PID" || return 1
	for _ in $(seq 100); do _aq_s3_port_free "$AQ_PROXY_PORT" || return 0; sleep 0.05; done
	return 1
}

aq_proxy_stop() {
	[ -n "${AQ_PROXY_PID:-}" ] || return 0
	kill "$AQ_PROXY_PID" 2>/dev/null || true
	wait "$AQ_PROXY_PID" 2>/dev/null || true
	AQ_PROXY_PID=
}

aq_s3_cleanup() {
	aq_proxy_stop
	aq_s3_stop
}
