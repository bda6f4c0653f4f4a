#!/usr/bin/env bash
# The build's dependencies against the one list (tests/debian-packages.txt):
#
#   test_deps.sh SOURCE_DIR BUILD_DIR
#
# 1. Entry points: demo/run.sh, tests/run-all.sh and bench/run.sh install through
#    tests/install-deps.sh with their group (--build, --test, --bench), never apt-get
#    themselves; .ci/run runs tests/run-all.sh; the demo configures without the tests.
# 2. What a configure really uses, asked of dpkg: every pkg-config module CMake checked
#    (*_MODULE_NAME in CMakeCache.txt) and every tool or library file it found (FILEPATH
#    entries, CMAKE_COMMAND) belongs to a package that the entry point's group installs (or
#    to a package that one of those depends on, or to an essential package).  The demo's
#    configure is run here in a scratch directory as the demo runs it; the tests' is
#    BUILD_DIR's own.
# 2b. Every program the tests and benchmarks run by name comes from such a package too.
# 3. A configure that cannot find a module names its Debian package and the command.
# Prints each problem and exits 1 if there is any.
set -u
SRC=${1:?usage: test_deps.sh SOURCE_DIR BUILD_DIR}
BUILD=${2:?usage: test_deps.sh SOURCE_DIR BUILD_DIR}
T=$(mktemp -d "${TMPDIR:-/tmp}/lv-deps-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
pass=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
ok() { pass=$((pass + 1)); }

# ---- 1. entry points ----
entry() { # FILE GROUP-FLAG
	local f=$SRC/$1
	if grep -En '^[^#]*apt-get +(-[^ ]+ +)*install' "$f" >/dev/null; then
		bad "$1 runs apt-get install itself: $(grep -En '^[^#]*apt-get +(-[^ ]+ +)*install' "$f" | head -1)"
	else ok; fi
	if grep -Eq "install-deps\.sh\"?( +[^ ]+)* +$2( |\$|\")" "$f"; then ok
	else bad "$1 does not install its dependencies with tests/install-deps.sh $2"; fi
}
entry demo/run.sh --build
entry tests/run-all.sh --test
entry bench/run.sh --bench
if grep -Eq '^exec bash tests/run-all\.sh' "$SRC/.ci/run"; then ok; else bad ".ci/run does not run tests/run-all.sh"; fi
if grep -q -- '-DLV_BUILD_TESTS=OFF' "$SRC/demo/run.sh"; then ok
else bad "demo/run.sh configures the tests too, which need packages --build does not install"; fi

# ---- 2. what a configure used, and who owns it ----
# The Debian package that owns PATH, following symlinks (alternatives); "" if none.
owner() {
	local p=$1 o i
	for i in 1 2 3 4 5 6 7 8; do
		o=$(dpkg-query -S "$p" 2>/dev/null | grep -v '^diversion' | head -1 | cut -d: -f1)
		[ -n "$o" ] && { echo "$o"; return; }
		[ -L "$p" ] || return
		local t
		t=$(readlink "$p")
		case $t in /*) p=$t ;; *) p=$(dirname "$p")/$t ;; esac
	done
}
# Packages a group installs, and the packages those depend on directly.
allowed() { # GROUP
	local pkgs
	pkgs=$(bash "$SRC/tests/install-deps.sh" "$1" --print)
	echo "$pkgs"
	for p in $pkgs; do
		dpkg-query -W -f='${Depends}, ${Pre-Depends}\n' "$p" 2>/dev/null
	done | tr ',|' '\n\n' | sed -E 's/\(.*\)//; s/:[a-z0-9]+//; s/^ +//; s/ +$//' | grep -v '^$'
}
# "key<TAB>file" for what CMakeCache.txt says the configure used.
used() { # CACHE
	local c=$1
	sed -nE 's/^([A-Za-z0-9_]+)_MODULE_NAME:INTERNAL=(.+)$/\1\t\2/p' "$c" | while IFS=$'\t' read -r k m; do
		printf 'pkg-config module %s\t%s/%s.pc\n' "$m" "$(pkg-config --variable=pcfiledir "$m")" "$m"
	done
	sed -nE 's/^(CMAKE_COMMAND):INTERNAL=(.+)$/\1\t\2/p; s/^([A-Za-z0-9_]+):FILEPATH=(\/.+)$/\1\t\2/p' "$c" |
		while IFS=$'\t' read -r k f; do
			case $f in "$SRC"/* | "$BUILD"/* | "$T"/*) continue ;; esac
			[ -e "$f" ] && printf '%s\t%s\n' "$k" "$f"
		done
}
check_cache() { # CACHE GROUP WHO
	local cache=$1 group=$2 who=$3 allow
	allow=$(allowed "$group")
	while IFS=$'\t' read -r what file; do
		local o
		o=$(owner "$file")
		if [ -z "$o" ]; then
			bad "$who uses $file ($what), which no Debian package installed it"
		elif grep -qx "$o" <<<"$allow" || [ "$(dpkg-query -W -f='${Essential}' "$o" 2>/dev/null)" = yes ]; then
			ok
		else
			bad "$who uses $file ($what) from the Debian package $o, which tests/install-deps.sh $group does not install (add it to tests/debian-packages.txt)"
		fi
	done < <(used "$cache")
}
if ! command -v dpkg-query >/dev/null; then
	bad "dpkg-query not found: this check runs on Debian"
else
	gen=()
	command -v ninja >/dev/null && gen=(-G Ninja)
	# the demo's configure, as demo/run.sh runs it
	if cmake -S "$SRC" -B "$T/demo" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLV_BUILD_TESTS=OFF >"$T/demo.log" 2>&1; then
		check_cache "$T/demo/CMakeCache.txt" --build "the demo's build"
	else
		bad "the demo's configure failed: $(tail -5 "$T/demo.log")"
	fi
	check_cache "$BUILD/CMakeCache.txt" --test "the tests' build"
fi

# ---- 2b. programs the tests and benchmarks run, and who owns them ----
# Found by name where a test spawns one (Node's spawn/spawnSync/execFile/execFileSync and
# Python's subprocess with a literal program), plus the ones the shell scripts run.  Each must
# come from a package the group installs (or its dependencies) or an essential one: protoc
# was on the development machine by chance and missing on a fresh one.
programs() { # DIR...
	grep -rhoE --exclude-dir=node_modules "(spawnSync|execFileSync|spawn|execFile)\(['\"][A-Za-z0-9_.+-]+['\"]" "$@" --include=*.mjs --include=*.js 2>/dev/null |
		sed -E "s/.*\(['\"]//; s/['\"]$//"
	grep -rhoE --exclude-dir=node_modules "subprocess\.(run|check_output|check_call|Popen)\(\[['\"][A-Za-z0-9_.+-]+['\"]" "$@" --include=*.py 2>/dev/null |
		sed -E "s/.*\[['\"]//; s/['\"]$//"
}
# The list names a package that provides PROG (bin:PROG) in GROUP or a group GROUP includes.
listed_bin() { # GROUP PROG
	local groups
	case $1 in --build) groups="build" ;; --test) groups="build test" ;; *) groups="build test bench" ;; esac
	awk -v g=" $groups " -v p="bin:$2" '!/^#/ && NF >= 3 && index(g, " " $1 " ") && $3 == p { f = 1 } END { exit !f }' \
		"$SRC/tests/debian-packages.txt"
}
check_programs() { # GROUP WHO DIR...
	local group=$1 who=$2 allow prog
	shift 2
	allow=$(allowed "$group")
	for prog in $( (programs "$@"; echo "$SHELL_PROGRAMS") | tr ' ' '\n' | grep -v '^$' | sort -u | grep -vxF -f <(tr ' ' '\n' <<<"$OPTIONAL")); do
		local path o
		# Debian's programs, not a pyenv shim or anything else first on this PATH
		path=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v "$prog" 2>/dev/null)
		if [ -z "$path" ]; then
			# not installed (this may be a machine set up for another group): the list must name
			# the package that provides it in this group
			if listed_bin "$group" "$prog"; then ok
			else bad "$who run $prog, which is not installed here and no package in tests/debian-packages.txt for $group provides (bin:$prog)"; fi
			continue
		fi
		case $path in /*) ;; *) ok; continue ;; esac # a shell builtin
		o=$(owner "$path")
		[ -z "$o" ] && o=$(owner "/bin/${path##*/}") # usrmerge: dpkg knows /bin/cp, not /usr/bin/cp
		if [ -z "$o" ]; then
			# node and npm may come from NodeSource (install-deps.sh installs Debian's only when missing)
			case $prog in node | npm | npx) ok ;; *) bad "$who run $prog ($path), which no Debian package installed" ;; esac
		elif grep -qx "$o" <<<"$allow" || [ "$(dpkg-query -W -f='${Essential}' "$o" 2>/dev/null)" = yes ]; then
			ok
		else
			bad "$who run $prog from the Debian package $o, which tests/install-deps.sh $group does not install (add it to tests/debian-packages.txt)"
		fi
	done
}
if command -v dpkg-query >/dev/null; then
	OPTIONAL="git" # bench/report.mjs names the commit when git is there, "?" otherwise
	SHELL_PROGRAMS="node npm python3 pytest-3 script strace valgrind clang-14 groff pkg-config cmake"
	check_programs --test "the tests" "$SRC/tests" "$SRC/python"
	SHELL_PROGRAMS="node gnuplot"
	check_programs --bench "the benchmarks" "$SRC/bench"
fi

# ---- 3. the configure-time message for a missing module ----
out=$(PKG_CONFIG_LIBDIR=$T/no-such-dir cmake -S "$SRC" -B "$T/nomod" "${gen[@]}" -DLV_BUILD_TESTS=OFF 2>&1)
st=$?
if [ $st != 0 ] && grep -q "Debian package libjansson-dev" <<<"$out" &&
	grep -q "apt-get install --no-install-recommends libjansson-dev" <<<"$out" &&
	grep -q "bash tests/install-deps.sh --build" <<<"$out"; then ok
else bad "a configure without jansson does not name libjansson-dev and the install command (exit $st): $(tail -8 <<<"$out")"; fi

echo "$pass passed, $fail failed"
[ $fail = 0 ]
