# slurmcmds.sh - Loom's Slurm commands in a test: loomd's listen_peer
# socket, the commands as links in $SC, running them as an account, and
# the fabric their tests share.
# SPDX-License-Identifier: MIT

# slurmcmds_setup: $SC holds sbatch, squeue, ... (links to the build
# tree's loom-slurm), readable by every account; $PEER_SOCK is the socket
# loomd_conf's listen_peer line names (its directory is loomd's).
slurmcmds_setup() {
    local c
    SC=$T/slurmbin
    mkdir -p "$SC" && chmod 0755 "$T" "$SC" || return 1
    for c in sbatch squeue scancel scontrol sinfo sacct sacctmgr srun; do
        ln -sf "$LOOM_TOP_BUILDDIR/loom-slurm" "$SC/$c" || return 1
    done
    mkdir -p "$T/sock" && chmod 0755 "$T/sock" && loom_owns "$T/sock" ||
        return 1
    PEER_SOCK=$T/sock/loomd.sock
    export SC PEER_SOCK
}

# as_user NAME CMD...: CMD as the account NAME, in its home, with the
# Slurm commands first on PATH and LOOM_URL the peer socket.
as_user() {
    local u=$1
    shift
    (cd "$T/home/$u" && setpriv --reuid="$u" --regid="$u" --init-groups -- \
        env -i HOME="$T/home/$u" USER="$u" LOGNAME="$u" \
        PATH="$SC:/usr/local/bin:/usr/bin:/bin" LANG=C.UTF-8 \
        LOOM_URL="unix:$PEER_SOCK" ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} \
        ${UBSAN_OPTIONS:+UBSAN_OPTIONS=$UBSAN_OPTIONS} \
        "$@")
}

# slurmcmds_fabric: a real Slurm of two nodes, PostgreSQL, and a loomd with
# the listen_peer socket and two clusters, local (two nodes) and slurm, as
# the tests of the commands use them; TOKEN is the admin's. On failure,
# SC_WHY says which step failed.
slurmcmds_fabric() {
    SC_WHY="Slurm did not start"
    slurm_start 2 || return 1
    SC_WHY="no PostgreSQL"
    pg_start || return 1
    SC_WHY="no loom.conf"
    loomd_conf <<EOF || return 1
listen_peer = unix:$PEER_SOCK
[cluster local]
adaptor = local
nodes = 2
cpus_per_node = 2
memory_mb = 2048
poll_s = 0.2
[cluster slurm]
adaptor = script
pack = slurm
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.5
EOF
    SC_WHY="loomd did not start"
    loomd_start || return 1
    SC_WHY="no admin token"
    admin_token
}
