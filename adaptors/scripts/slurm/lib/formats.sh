# formats.sh - the output formats the pack asks Slurm for; sourced by the
# ops that parse them and by tests/fixtures/slurm/record.sh, which records
# real outputs in the same formats. SPDX-License-Identifier: MIT

# sinfo -h -N -O: one line per node and partition; the reason last (free
# text, may hold "|"). lib/nodes.awk reads it.
NODES_FORMAT='NodeList:|,StateComplete:|,CPUs:|,CPUsState:|,Memory:|,AllocMem:|,Gres:|,Features:|,Partition:|,Reason:|'

# squeue -h -t all -o: these fields, each record led by \036 and the fields
# separated by \037 (names and comments are free text); lib/jobs.awk reads
# them in this order. Times need SLURM_TIME_FORMAT=%s. %D %c %m %l (nodes,
# CPUs per node, memory, time limit) are the request of a job its user
# holds: in the same squeue, so that such a job costs no second one.
JOBS_FIELDS='%A %t %r %u %N %V %S %e %D %c %m %l %k %j'

# RS and US are the bytes \036 and \037 themselves (cat -v shows ^^ and
# ^_): POSIX sh writes them only with printf, and $(printf ...) would fork
# at every poll. tests/unit/packs_slurm.t checks them.
RS=''
US=''

# JOBS_FORMAT: the squeue -o string for JOBS_FIELDS.
JOBS_FORMAT=$RS
_sep=
for _f in $JOBS_FIELDS; do
    JOBS_FORMAT=$JOBS_FORMAT$_sep$_f
    _sep=$US
done

# jobs_format: print JOBS_FORMAT (for tests/fixtures/slurm/record.sh).
jobs_format() {
    printf '%s' "$JOBS_FORMAT"
}
