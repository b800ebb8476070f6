#!/usr/bin/env bash
# banned.t - the banned calls of docs/internals/style.md, checked over the
# C rooms.
# SPDX-License-Identifier: MIT
#
# One TAP test point per rule; each offending line is printed as a
# diagnostic (FILE:LINE: text). Comments and string literals are blanked
# out first, so prose such as "the cluster system (CMS)" is not a call.
# SQL is never built in a buffer: PQexec() (a query string) is banned, only
# PQexecParams and PQprepare + PQexecPrepared are allowed.
set -u

TOP=${LOOM_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
cd "$TOP" || { echo "Bail out! no source tree at $TOP"; exit 1; }

mapfile -t FILES < <(find core adaptors scheduler maintenance grid \
    -type f \( -name '*.c' -o -name '*.h' \) 2>/dev/null | LC_ALL=C sort)

# rule name | Perl regex of the call
RULES=(
    'sprintf|\b(?:v?sprintf)\s*\('
    'strcpy|\bstrcpy\s*\('
    'strcat|\bstrcat\s*\('
    'strtok|\bstrtok\s*\('
    'atoi|\batoi\s*\('
    'gets|\bgets\s*\('
    'system|\bsystem\s*\('
    'popen|\bpopen\s*\('
    'PQexec (SQL as a string; use PQexecParams)|\bPQexec\s*\('
)

echo "1..$((${#RULES[@]} + 1))"
n=1
if [ ${#FILES[@]} -gt 0 ]; then
    echo "ok $n - found ${#FILES[@]} C files to check"
else
    echo "not ok $n - found no C files under core/ adaptors/ scheduler/ maintenance/ grid/"
fi
failed=0

# Print FILE:LINE: line for each line of the files whose code (comments and
# strings blanked, line numbers kept) matches the regex in $ENV{RE}.
scan() {
    RE=$1 perl -e '
        my $re = qr/$ENV{RE}/;
        for my $f (@ARGV) {
            open(my $fh, "<", $f) or next;
            local $/;
            my $src = <$fh>;
            close $fh;
            my @orig = split /\n/, $src, -1;
            # Blank comments, string and character literals; keep newlines.
            $src =~ s{(/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'"'"'(?:\\.|[^'"'"'\\\n])*'"'"')}{
                my $m = $1; (my $b = $m) =~ s/[^\n]/ /g;
                $m =~ /^"/ ? "\"" . substr($b, 2) . "\"" : $b }gse;
            my @code = split /\n/, $src, -1;
            for my $i (0 .. $#code) {
                print "$f:", $i + 1, ": $orig[$i]\n" if $code[$i] =~ $re;
            }
        }' "${FILES[@]}"
}

for rule in "${RULES[@]}"; do
    name=${rule%%|*}
    re=${rule#*|}
    n=$((n + 1))
    hits=
    [ ${#FILES[@]} -gt 0 ] && hits=$(scan "$re")
    if [ -z "$hits" ]; then
        echo "ok $n - no $name"
    else
        echo "not ok $n - no $name"
        while IFS= read -r line; do
            echo "#   $line"
        done <<<"$hits"
        failed=1
    fi
done
exit "$failed"
