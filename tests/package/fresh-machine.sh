#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# The README's promise on a fresh machine (`make fresh-check`; CI runs it first). In a minimal
# Debian root made here (mmdebstrap --variant=minbase, from the Debian entries of this machine's
# apt sources, plus make and gcc and nothing else; its package lists empty), with a clone of the
# commit at HEAD, the commands of the README's first sh block (`make stress`, `make check`), read
# from HEAD's README.md and run literally, in order, as root, through chroot with /proc, /sys and
# /dev mounted. It passes when each command exits 0 the first time, and a command that prints
# run.sh's "check: N passed, N failed, N skipped" line reports 0 failed and skips only the
# platform limits that the README's "## Tests" section lists for the default build (ALLOWED_SKIPS
# below). It prints each step's time; a failure names the command and its first error line.
# Uncommitted changes and untracked files are not tested: the root gets HEAD (a note says so).
#
# Usage: sh tests/package/fresh-machine.sh [LOG_DIR]      (run from the top of the checkout, as root)
#   LOG_DIR (default build/fresh) keeps each command's whole output, <command>.log.
#   The root is made in $TMPDIR (default /tmp) and removed at the end, also on failure or
#   interrupt: the mounts are undone first (umount -R), processes left running inside it are
#   killed, and it is deleted only when findmnt shows nothing mounted under it, with
#   rm -rf --one-file-system; otherwise it is left with a message. FRESH_KEEP=1 keeps it.
# Needs root, mmdebstrap, git, util-linux (findmnt, mount) and the network to the Debian mirror.
# Exit status: 0 passed, 1 the README's promise is broken (or the root could not be removed),
# 2 the test cannot run here.
set -u
export LC_ALL=C

# Skips that are limits of the platform in the default build, with their reason in README.md.
ALLOWED_SKIPS="check_asan test_dlopen.sh"
CHROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
SRC_IN_ROOT=/root/libpool

logs=${1:-build/fresh}
repo=$(pwd)
start=$(date +%s)
root=
mounted=

say() { echo "fresh-machine: $*"; }
cannot() { say "cannot run: $*"; exit 2; }

# elapsed <since>: seconds from <since> to now
elapsed() { echo $(($(date +%s) - $1)); }

# mounts_under <dir>: the mount points at or below <dir>, one a line
mounts_under() {
	findmnt -rn -o TARGET | awk -v d="$1" '$0 == d || index($0, d "/") == 1'
}

# Undo what was set up, on every exit path: kill what still runs inside the root (its processes
# keep the mounts busy), unmount, then remove the root only when nothing is mounted under it.
cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	[ -n "$root" ] || exit $rc
	killed=
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] &&
			kill -KILL "${p#/proc/}" 2>/dev/null && killed=1
	done
	[ -n "$killed" ] && sleep 1     # for the killed to let go of the mounts
	if [ -n "$mounted" ]; then
		for m in dev sys proc; do
			[ -n "$(mounts_under "$root/$m")" ] && umount -R "$root/$m"
		done
	fi
	left=$(mounts_under "$root")
	if [ -n "$left" ]; then
		say "still mounted under $root, so it is NOT removed:"
		echo "$left" | sed 's/^/  /'
		say "unmount them (umount -R), then: rm -rf --one-file-system $root"
		[ $rc -eq 0 ] && rc=1
	elif [ "${FRESH_KEEP:-0}" = 1 ]; then
		say "the root is kept (FRESH_KEEP=1): $root"
	else
		rm -rf --one-file-system "$root"
	fi
	exit $rc
}

# first_error <log>: the line that says what went wrong first. For make check, in the output of
# the first test that failed, its first line that looks like an error, else its last line;
# otherwise the first line of the whole log that looks like an error (compiler, linker, make,
# apt, deps, a test's FAIL), else the last line.
ERROR_RE='(^|[^a-z])(error|Error|ERROR)(:| [0-9])|undefined reference|\*\*\*|^E: |(^|[^A-Za-z_])FAIL|^deps: (missing|apt-get|.* finds no)|: not found$|command not found|:[0-9]+:[EF]:|^Traceback|CORRUPTION|: cannot '
first_error() {
	failed_test=$(sed -n 's/^--- FAILED ([0-9]*): //p' "$1" | head -n 1)
	if [ -n "$failed_test" ]; then
		awk -v t="$failed_test" '$0 == "=== " t { on = 1; next }
			on && index($0, "--- " t ": ") == 1 { exit } on' "$1" |
			grep -v -e '^ok: ' -e '^[[:space:]]*$' > "$root/tmp/fresh-section"
		line=$(grep -E -m 1 "$ERROR_RE" "$root/tmp/fresh-section")
		echo "$failed_test: ${line:-$(tail -n 1 "$root/tmp/fresh-section")}"
		return
	fi
	line=$(grep -v '^ok: ' "$1" | grep -E -m 1 "$ERROR_RE")
	[ -n "$line" ] || line=$(grep -v '^[[:space:]]*$' "$1" | tail -n 1)
	echo "$line"
}

# skip_reason <log> <test>: the first line of the test's output that says "skip"
skip_reason() {
	awk -v t="$2" '$0 == "=== " t { on = 1; next }
		on && /^--- / { exit } on && tolower($0) ~ /skip/ { print; exit }' "$1"
}

[ "$(id -u)" = 0 ] || cannot "needs root (mmdebstrap, mount, chroot)"
for c in mmdebstrap git findmnt mount umount chroot; do
	command -v $c >/dev/null 2>&1 ||
		cannot "$c is missing (Debian: apt-get install -y mmdebstrap git util-linux mount)"
done
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || cannot "$repo is not a git checkout"
[ "$(git rev-parse --show-toplevel)" = "$repo" ] || cannot "run it from the top of the checkout"
sha=$(git rev-parse --verify HEAD) || cannot "no commit at HEAD"
[ -z "$(git status --porcelain)" ] ||
	say "note: uncommitted changes and untracked files are not tested: the root gets HEAD"

# The README's commands: its first sh block, read from HEAD (what the root gets), one a line.
commands=$(git show HEAD:README.md | awk '/^```sh$/ { on = 1; next } on && /^```/ { exit } on' |
	grep -v '^[[:space:]]*\(#.*\)\{0,1\}$')
[ -n "$commands" ] || cannot "no command in the first sh block of HEAD's README.md"
# each allowed skip must be listed, with its reason, in the README's Tests section
tests_section=$(git show HEAD:README.md | awk '/^## / { on = ($0 == "## Tests") } on')
for t in $ALLOWED_SKIPS; do
	echo "$tests_section" | grep -q "\`$t\`" ||
		cannot "README.md's '## Tests' section does not list the skip of $t"
done

# The Debian entries of this machine's apt sources (one-line .list files and deb822 .sources),
# as one-line entries for mmdebstrap; the suite is the first one without a dash (bookworm, not
# bookworm-updates). Entries of other archives (a vendor's repository) are left out.
mirrors=$(
	{
		cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			sed -e 's/#.*//' -e 's/\[[^]]*\]//' | awk '$1 == "deb" { $1 = $1; print }'
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -r "$f" ] || continue
			awk '
			function flush() {
				if (types ~ /(^| )deb( |$)/ && enabled != "no")
					for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++)
						print "deb", u[i], s[j], comps
				types = ""; enabled = ""; comps = ""; nu = 0; ns = 0
			}
			/^[[:space:]]*#/ { next }
			/^[[:space:]]*$/ { flush(); next }
			{ key = tolower($1); sub(/:$/, "", key); $1 = ""; sub(/^ +/, "") }
			key == "types" { types = $0 }
			key == "enabled" { enabled = tolower($0) }
			key == "uris" { nu = split($0, u, " ") }
			key == "suites" { ns = split($0, s, " ") }
			key == "components" { comps = $0 }
			END { flush() }' "$f"
		done
	} | awk '$2 ~ /\/debian(-security)?\/?$/ && !seen[$0]++'
)
[ -n "$mirrors" ] || cannot "no Debian entry in /etc/apt/sources.list or /etc/apt/sources.list.d"
suite=$(echo "$mirrors" | awk '$3 !~ /-/ { print $3; exit }')
[ -n "$suite" ] || suite=$(echo "$mirrors" | awk '{ print $3; exit }')

mkdir -p "$logs" || cannot "cannot create $logs"
logs=$(cd "$logs" && pwd)
root=$(mktemp -d "${TMPDIR:-/tmp}/libpool-fresh.XXXXXX") || cannot "mktemp failed"
trap cleanup EXIT
root=$(cd "$root" && pwd -P)    # as /proc/<pid>/root and findmnt show it
trap 'say "interrupted (SIGINT)"; exit 130' INT
trap 'say "interrupted (SIGTERM)"; exit 143' TERM
trap 'say "interrupted (SIGHUP)"; exit 129' HUP

say "commit $sha; the README's commands:"
echo "$commands" | sed 's/^/  /'
say "minimal Debian root ($suite, minbase + make gcc) in $root from:"
echo "$mirrors" | sed 's/^/  /'
t0=$(date +%s)
# one argument per entry (the entries hold spaces, never newlines), no globbing
old_ifs=$IFS
IFS='
'
set -f
# shellcheck disable=SC2086
mmdebstrap --variant=minbase --include=make,gcc "$suite" "$root" $mirrors \
	> "$logs/mmdebstrap.log" 2>&1
rc=$?
set +f
IFS=$old_ifs
if [ $rc -ne 0 ]; then
	say "FAILED: mmdebstrap (exit $rc): $(first_error "$logs/mmdebstrap.log")"
	tail -n 20 "$logs/mmdebstrap.log"
	exit 2
fi
mmdebstrap_s=$(elapsed "$t0")
say "mmdebstrap: $mmdebstrap_s s"
# an empty package state: no package list is kept from the root's making
for f in "$root"/var/lib/apt/lists/*_Packages*; do
	[ -e "$f" ] && { say "FAILED: the root's apt package lists are not empty: $f"; exit 1; }
done
for c in make gcc; do
	[ -x "$root/usr/bin/$c" ] || { say "FAILED: no $c in the root"; exit 1; }
done

t0=$(date +%s)
git clone -q --no-local --no-checkout "$repo" "$root$SRC_IN_ROOT" > "$logs/clone.log" 2>&1 &&
	git -C "$root$SRC_IN_ROOT" checkout -q --detach "$sha" >> "$logs/clone.log" 2>&1 ||
	{ say "FAILED: git clone of $sha: $(cat "$logs/clone.log")"; exit 2; }
say "git clone: $(elapsed "$t0") s"

mount -t proc proc "$root/proc" && mounted=1 &&
	mount -t sysfs sysfs "$root/sys" &&
	mount --rbind /dev "$root/dev" &&
	mount --make-rslave "$root/dev" ||
	{ say "cannot mount /proc, /sys and /dev in the root"; exit 2; }

summary=""
status=0
n=0
while IFS= read -r cmd; do
	n=$((n + 1))
	name=$(echo "$cmd" | sed -e 's/[[:space:]]*#.*$//')
	log=$logs/$(printf '%s' "$name" | tr -c 'a-zA-Z0-9_.' '-').log
	say "\$ $cmd"
	t0=$(date +%s)
	# a root login's environment, nothing of this one's; the output shown and kept
	{
		chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/sh \
			TERM=dumb PATH=$CHROOT_PATH /bin/sh -c "cd $SRC_IN_ROOT && $cmd" </dev/null
		echo $? > "$root/tmp/fresh-rc"
	} 2>&1 | tee "$log"
	rc=$(cat "$root/tmp/fresh-rc")
	secs=$(elapsed "$t0")
	summary="$summary
  $name: $secs s, exit $rc"
	if [ "$rc" -ne 0 ]; then
		say "FAILED: '$name' (exit $rc, after $secs s): $(first_error "$log")"
		say "its whole output: $log"
		status=1
		break
	fi
	check=$(sed -n 's/^check: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' \
		"$log" | tail -n 1)
	[ -n "$check" ] || continue
	set -- $check
	summary="$summary; check: $1 passed, $2 failed, $3 skipped"
	if [ "$2" -ne 0 ]; then
		say "FAILED: '$name': $2 failed: $(first_error "$log")"
		status=1
		break
	fi
	bad=""
	for t in $(sed -n 's/^--- skipped: //p' "$log"); do
		case " $ALLOWED_SKIPS " in
		*" $(basename "$t") "*) summary="$summary
    skipped, a platform limit (README.md, Tests): $(basename "$t")" ;;
		*) bad="$bad
  $(basename "$t"): $(skip_reason "$log" "$t")" ;;
		esac
	done
	if [ -n "$bad" ]; then
		say "FAILED: '$name' skipped tests that are not platform limits:$bad"
		status=1
		break
	fi
done <<EOF
$commands
EOF

say "mmdebstrap: $mmdebstrap_s s$summary"
say "total: $(elapsed "$start") s"
if [ $status -eq 0 ]; then
	say "passed: the README's commands work the first time on a minimal Debian ($suite)"
fi
exit $status
