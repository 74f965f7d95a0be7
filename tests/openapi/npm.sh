# tests/openapi/npm.sh: aq_npm_setup, shared by the e2e libraries (sourced).
# Needs AQ_SRC (the source tree).

# aq_npm_setup: npm ci the openapi tools once per lockfile into the cache;
# sets AQ_NODE_MODULES and exports NODE_PATH.
aq_npm_setup() {
	local lock=$AQ_SRC/openapi/package-lock.json sum dir
	sum=$(cat "$AQ_SRC/openapi/package.json" "$lock" | sha256sum | cut -c1-16)
	dir=${AQ_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aquifer-npm}/$sum
	mkdir -p "$dir"
	(
		flock 9
		if [ ! -f "$dir/.done" ]; then
			cp "$AQ_SRC/openapi/package.json" "$lock" "$dir/"
			if ! (cd "$dir" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >"$dir/npm.log" 2>&1); then
				cat "$dir/npm.log" >&2
				exit 1
			fi
			touch "$dir/.done"
		fi
	) 9>"$dir.lock" || { echo "$(basename "$0"): npm ci failed" >&2; exit 99; }
	AQ_NODE_MODULES=$dir/node_modules
	export NODE_PATH=$AQ_NODE_MODULES
}
