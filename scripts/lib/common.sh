# Sourced by the scripts in scripts/: where things are, how they talk, and the Debian package helpers.
# shellcheck shell=bash

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The bench's downloads and packed initramfs layers. Ignored by git; kept across `make clean` on purpose
# (the kernel package is ~70 MB). HAPTICS_VM_CACHE lets several clones share one.
# shellcheck disable=SC2034 # used by the scripts that source this file
VM_CACHE=${HAPTICS_VM_CACHE:-$REPO_ROOT/vm-cache}
SCRIPT_NAME=${0##*/}
# The corpus of real-world AHAP files is no part of the repository, and AHAP_CORPUS is the one way to name it:
# unset, nothing reads a corpus (the tests that need it are reported skipped, with the reason; the benchmarks
# measure the repository's fixtures, Tests/Fixtures/ahap). scripts/vm-run copies a named corpus into the guest's
# working directory as GUEST_AHAP_CORPUS, and guest_corpus_assignment tells the guest's runner where it is.
# shellcheck disable=SC2034 # used by the scripts that source this file
HOST_AHAP_CORPUS=${AHAP_CORPUS-}
if [ -n "$HOST_AHAP_CORPUS" ] && [ -d "$HOST_AHAP_CORPUS" ]; then
    # Absolute, so that the harnesses these scripts start from another folder find it too, and with symbolic links
    # resolved, so that copying it (scripts/vm-run) copies the folder, not a link.
    HOST_AHAP_CORPUS=$(cd "$HOST_AHAP_CORPUS" && pwd -P)
    export AHAP_CORPUS=$HOST_AHAP_CORPUS
fi
# shellcheck disable=SC2034
GUEST_AHAP_CORPUS=shared/ahap

# The comment block at the top of the running script (its usage), without the leading "# ".
print_header() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }

say() { printf '%s: %s\n' "$SCRIPT_NAME" "$*" >&2; }
die() { say "$*"; exit 1; }

# Fails unless AHAP_CORPUS is unset or names the corpus (a folder with its SOURCES.md): a wrong name is a mistake
# to report, not a corpus to skip.
check_named_corpus() {
    [ -z "$HOST_AHAP_CORPUS" ] || [ -f "$HOST_AHAP_CORPUS/SOURCES.md" ] ||
        die "AHAP_CORPUS=$HOST_AHAP_CORPUS is not the AHAP corpus (it has no SOURCES.md); unset it to run without one"
}

# "AHAP_CORPUS=<the guest's copy> " when the host names a corpus, nothing otherwise: the start of a guest command.
guest_corpus_assignment() {
    [ -z "$HOST_AHAP_CORPUS" ] || printf 'AHAP_CORPUS=%s ' "$GUEST_AHAP_CORPUS"
}
is_root() { [ "$(id -u)" -eq 0 ]; }

# Seconds since the epoch with milliseconds, for the timings the bench reports.
now() { date +%s.%3N; }
elapsed_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# Prints the packages among "$@" that dpkg does not list as installed.
missing_packages() {
    local package
    for package in "$@"; do
        [ "$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null)" = installed ] || echo "$package"
    done
}

# True when apt knows a candidate version for every package in "$@" (i.e. the package lists are usable).
apt_has_candidates() {
    local package policy
    for package in "$@"; do
        # Not a pipe into `grep -q`: under pipefail its early exit would fail apt-cache with SIGPIPE.
        policy=$(apt-cache policy "${package%%=*}" 2>/dev/null)
        [[ $policy == *"Candidate: "[!\(]* ]] || return 1
    done
}

# `apt-get update`, only when apt does not know one of "$@" yet, and only as root.
apt_update_if_needed() {
    apt_has_candidates "$@" && return 0
    is_root || die "apt does not know $* (run 'apt-get update' as root first)"
    say "apt does not know $* yet: running apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
}

# Downloads the .deb of each package in "$@" into the current directory, without installing anything.
apt_download() {
    apt_update_if_needed "$@"
    # As root, apt drops to the _apt user for downloads, which cannot write to our cache folder.
    apt-get download -qq -o APT::Sandbox::User=root "$@" >&2
}

# The version apt would install for package $1.
apt_candidate() {
    apt-cache policy "$1" | sed -n 's/^ *Candidate: //p'
}
