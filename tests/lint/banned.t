#!/usr/bin/env bash
# banned.t - the banned calls of docs/internals/style.md, checked over the
# C rooms.
# SPDX-License-Identifier: MIT
#
# One TAP test point per rule; each offending line is printed as a
# diagnostic (FILE:LINE: text). Comments and string literals are blanked
# out first, so prose such as "the cluster system (CMS)" is not a call.
# Each rule must also find the call planted in a scratch file, and the
# scanner must read every file: a rule or a scanner that cannot find
# anything fails, it does not pass.
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

# scan RE FILE...: print FILE:LINE: line for each line of the files whose
# code (comments and strings blanked, line numbers kept) matches RE. Exit
# status 0, or not 0 when perl failed or a file could not be read.
scan() {
    RE=$1 perl -e '
        my $re = qr/$ENV{RE}/;
        for my $f (@ARGV) {
            open(my $fh, "<", $f) or die "$f: $!\n";
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
        }' "${@:2}"
}

# A scratch file with one call of each banned function, and one in a
# comment and a string (which must not count).
PLANT=$(mktemp /tmp/loom-banned.XXXXXX) || { echo "Bail out! no temp file"; exit 1; }
trap 'rm -f "$PLANT"' EXIT
cat >"$PLANT" <<'EOF'
/* sprintf(a, "b") in a comment is prose */
static const char *s = "strcpy(a, b) in a string";
void f(void) { sprintf(b, "x"); vsprintf(b, "x", ap); }
void g(void) { strcpy(a, b); strcat(a, b); strtok(a, b); }
void h(void) { n = atoi(a); gets(a); system(a); popen(a, "r"); }
void i(void) { PQexec(c, a); }
EOF

for rule in "${RULES[@]}"; do
    name=${rule%%|*}
    re=${rule#*|}
    n=$((n + 1))
    hits= st=1 planted=
    if [ ${#FILES[@]} -gt 0 ]; then
        hits=$(scan "$re" "${FILES[@]}" 2>&1)
        st=$?
    fi
    planted=$(scan "$re" "$PLANT" 2>&1 | grep -vc -e '^$')
    if [ "$st" = 0 ] && [ -z "$hits" ] && [ "$planted" -ge 1 ]; then
        echo "ok $n - no $name"
    else
        echo "not ok $n - no $name"
        [ "$st" = 0 ] || echo "#   the scan failed (status $st)"
        [ "$planted" -ge 1 ] || echo "#   the rule does not find the call planted in $PLANT"
        while IFS= read -r line; do
            echo "#   $line"
        done <<<"$hits"
        failed=1
    fi
done
exit "$failed"
