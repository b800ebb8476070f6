# error.awk - turn what a failed Slurm command printed on stderr into the
# pack's exit status and a one-line message. SPDX-License-Identifier: MIT
#
# Input: the command's stderr. Variables: cmd (the command's name), rc (its
# exit status). Prints "STATUS<TAB>MESSAGE" where STATUS is 75 (temporary:
# the controller cannot be reached, is busy, died under the request, or
# authentication or the configuration cannot be had right now), 1 (permanent: Slurm refused the
# request), or "?" when Slurm's words do not tell ("Unexpected message
# received" comes both from an unreachable controller and from a bad job id
# in scontrol suspend): the caller then asks `scontrol ping`.

BEGIN {
    TEMP = "Unable to contact slurm controller|Socket timed out|" \
        "Connection refused|Connection timed out|Connection reset by peer|" \
        "Zero Bytes were transmitted|Unexpected missing socket error|" \
        "backup controller in standby|Communication connection failure|" \
        "Resource temporarily unavailable|[Ss]lurmctld( is)? (busy|not responding)|" \
        "Could not establish a configuration source|fetch_config|" \
        "cannot stat file|Unable to process configuration file|" \
        "[Mm]unge|Transport endpoint|Network is unreachable|No route to host|" \
        "Insane message length|Protocol authentication error|" \
        ": not found$|Requested operation is presently disabled|" \
        "Job submit/allocate failed: Unable to contact"
    AMBIG = "Unexpected message received"
}

# Drop the command's name and the word "error" that Slurm puts first.
function tidy(s) {
    sub(/^[A-Za-z_]+: error: /, "", s)
    sub(/^[A-Za-z_]+( error)?: /, "", s)
    sub(/^error: /, "", s)
    gsub(/[\001-\037]/, " ", s)
    return s
}

NF == 0 { next }
# Verbose chatter (scancel -v) is not the reason.
/^[A-Za-z_]+: (Terminating|Signal) job/ { next }
{
    line = tidy($0)
    if (first == "")
        first = line
    if ($0 ~ TEMP) {
        temp = line
        exit
    }
    if ($0 ~ AMBIG && ambig == "")
        ambig = line
    if (/error/ && err == "")
        err = line
}

END {
    if (temp != "")
        printf "75\t%s: Slurm controller unreachable or busy: %s\n", cmd, temp
    else if (ambig != "" && err == "")
        printf "?\t%s: %s\n", cmd, ambig
    else if (err != "")
        printf "1\t%s: %s\n", cmd, err
    else if (first != "")
        printf "1\t%s: %s\n", cmd, first
    else
        printf "1\t%s: failed with status %s and no message\n", cmd, rc
}
