# formats.sh - the output formats the pack asks Slurm for; sourced by the
# ops that parse them and by tests/fixtures/slurm/record.sh, which records
# real outputs in the same formats. SPDX-License-Identifier: MIT

# sinfo -h -N -O: one line per node and partition; the reason last (free
# text, may hold "|"). lib/nodes.awk reads it.
NODES_FORMAT='NodeList:|,StateComplete:|,CPUs:|,CPUsState:|,Memory:|,AllocMem:|,Gres:|,Features:|,Partition:|,Reason:|'

# squeue -h -t all -o: these fields, each record led by \036 and the fields
# separated by \037 (names and comments are free text); lib/jobs.awk reads
# them in this order. Times need SLURM_TIME_FORMAT=%s.
JOBS_FIELDS='%A %t %r %u %N %V %S %e %k %j'

# jobs_format: the squeue -o string for JOBS_FIELDS.
jobs_format() {
    printf '\036'
    _sep=
    for _f in $JOBS_FIELDS; do
        printf "$_sep%s" "$_f"
        _sep='\037'
    done
}
