# tests/openapi/npm.sh: aq_npm_setup, shared by the e2e libraries (sourced).
# Needs AQ_SRC (the source tree).

# aq_npm_install DIR: npm ci DIR/package.json (+ package-lock.json) once per
# lockfile into the cache; sets AQ_NPM_DIR (holding node_modules/).
aq_npm_install() {
	local src=$1 lock=$1/package-lock.json sum dir
	sum=$(cat "$src/package.json" "$lock" | sha256sum | cut -c1-16)
	dir=${AQ_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aquifer-npm}/$sum
	mkdir -p "$dir"
	(
		flock 9
		if [ ! -f "$dir/.done" ]; then
			cp "$src/package.json" "$lock" "$dir/"
			if ! (cd "$dir" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >"$dir/npm.log" 2>&1); then
				cat "$dir/npm.log" >&2
				exit 1
			fi
			touch "$dir/.done"
		fi
	) 9>"$dir.lock" || { echo "$(basename "$0"): npm ci in $src failed" >&2; exit 99; }
	AQ_NPM_DIR=$dir
}

# aq_npm_setup: the openapi tools; sets AQ_NODE_MODULES and exports NODE_PATH.
aq_npm_setup() {
	aq_npm_install "$AQ_SRC/openapi"
	AQ_NODE_MODULES=$AQ_NPM_DIR/node_modules
	export NODE_PATH=$AQ_NODE_MODULES
}
