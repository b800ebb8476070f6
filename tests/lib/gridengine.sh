# gridengine.sh - a private, real Son of Grid Engine cell for Loom's tests.
# SPDX-License-Identifier: MIT
#
# Sourced after harness.sh (bash, as root):
#   . "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
#   . "$LOOM_TOP_SRCDIR/tests/lib/gridengine.sh"
#   ge_available || t_bail "no Grid Engine here: $GE_WHY"
#   ge_start [EXTRA_NODES] || t_bail "Grid Engine did not start"
#
# ge_available  0 when this machine can run a cell (root, the Debian
#               gridengine-master/-exec/-client binaries, loomd's account);
#               else GE_WHY says why not. Tests fail on it, they never
#               skip: CI installs the packages (./bootstrap check).
# ge_start [N]  builds a cell of its own in $T/ge (SGE_ROOT) named
#               loom<random> (never "default"), with classic spooling, free
#               qmaster and execd ports, host_aliases, min_uid 0, advance
#               reservations, a 1 s scheduler, parallel environments smp
#               ($pe_slots), mpi ($fill_up) and rr ($round_robin), and the
#               queue all.q (GE_SLOTS=4 slots per host) on this host, and a
#               gid_range of its own for each exec host (ge_gid_range);
#               starts sge_qmaster and sge_execd and waits (90 s at most)
#               until the exec host reports load and its queue instance has
#               no state flag. N > 0 (19 at most) adds N emulated exec
#               hosts, each an sge_execd in a network and UTS namespace of
#               its own (a /24 per host under 10.X, X chosen per run and
#               free on this machine), named
#               <cell>-nK in /etc/hosts (the qmaster and every client must
#               resolve them; edits by rename, under the lock
#               /tmp/loom-test-ge-hosts.lock that concurrent runs share).
#               No admin-only queue: the pack holds jobs itself (qsub -h).
#               loomd's account ($LOOM_SERVICE_USER) is a manager of the
#               cell (qconf -am), as root is: loomd holds, suspends and
#               deletes other users' jobs and sets queue states.
#               Registers ge_stop with t_cleanup.
#               Exports SGE_ROOT SGE_CELL SGE_QMASTER_PORT SGE_EXECD_PORT,
#               puts /usr/lib/gridengine first in PATH, and sets GE_CELL,
#               GE_HOST (this host's name in the cell), GE_NODES (every exec
#               host, this one first) and GE_ENV (the cluster's env.* lines
#               for a loom.conf).
# ge_stop       qdel of every job, qconf -kej of every exec host, SIGKILL of
#               the qmaster by PID (the cell is thrown away), then removes
#               the namespaces, the /etc/hosts lines it added and the cell.
#               Idempotent. Never kills by name, and kills only this cell's
#               daemons (ge_ours) and the shepherds in its spool.
# ge_kill_qmaster  SIGKILL the qmaster (to test a CMS that is down).
# ge_start_qmaster start it (again) on the cell's spool; waits until it
#               answers.
# ge_cmd CMD ARGS  run /usr/lib/gridengine/CMD.
# ge_wait_job_gone ID SECS  wait until qstat no longer lists job ID.
# ge_log MSG    a "# ge: MSG (at N.NNN s)" diagnostic line.

GE_BIN=/usr/lib/gridengine
GE_SLOTS=${GE_SLOTS:-4}
GE_CELL=
GE_HOST=
GE_NODES=
GE_ENV=
GE_QMASTER_PID=
GE_EXECD_PIDS=
GE_NETNS=
GE_HOSTS_TAG=
GE_T0=

ge_available() {
    local b
    if [ "$(id -u)" != 0 ]; then
        GE_WHY="Grid Engine tests need root (sge_execd runs jobs as their owner)"
        return 1
    fi
    for b in sge_qmaster sge_execd qconf qstat qhost qsub qacct qrsub \
        spoolinit spooldefaults gethostname; do
        if [ ! -x "$GE_BIN/$b" ]; then
            GE_WHY="$GE_BIN/$b missing (apt-get install gridengine-master gridengine-exec gridengine-client)"
            return 1
        fi
    done
    [ -d /var/lib/gridengine/bin ] || {
        GE_WHY="/var/lib/gridengine/bin missing (gridengine-common)"
        return 1
    }
    id -u "$LOOM_SERVICE_USER" >/dev/null 2>&1 || {
        GE_WHY="no account $LOOM_SERVICE_USER, a manager of the cell (./bootstrap creates it)"
        return 1
    }
    return 0
}

ge_cmd() {
    local c=$1
    shift
    "$GE_BIN/$c" "$@"
}

ge_log() {
    local now=${EPOCHREALTIME/[.,]/}
    local ms=$(((now - ${GE_T0:-$now}) / 1000))
    echo "# ge: $* (at $((ms / 1000)).$(printf %03d $((ms % 1000))) s)"
}

# ge_q CMD ARGS: run a Grid Engine command; on failure show its output.
ge_q() {
    local out
    out=$(ge_cmd "$@" 2>&1) && return 0
    t_diag "ge: $GE_BIN/$* failed:" "$out"
    return 1
}

# ge_two_ports: set GE_QMASTER_PORT and GE_EXECD_PORT to two distinct free
# TCP ports (nothing listens on them on 127.0.0.1).
ge_two_ports() {
    local a b i
    for ((i = 0; i < 20; i++)); do
        a=$(free_port) && b=$(free_port) || return 1
        [ "$a" != "$b" ] || continue
        (exec 3<>"/dev/tcp/127.0.0.1/$a") 2>/dev/null && continue
        (exec 3<>"/dev/tcp/127.0.0.1/$b") 2>/dev/null && continue
        GE_QMASTER_PORT=$a
        GE_EXECD_PORT=$b
        return 0
    done
    return 1
}

# ge_gid_range K: the gid_range of exec host K (0: this host, K: <cell>-nK).
# An execd gives each job a supplementary group id from its gid_range and,
# when the job ends or is deleted, SIGKILLs every process (not root's) that
# has that group (ENABLE_ADDGRP_KILL, on by default); its usage collector
# counts them as the job's too. Every execd on this machine, of every cell
# and of every test running at the same time, must therefore draw from a
# range of its own: with the shared default (65400-65500) the end of one
# cell's job killed another cell's job ("failed 100 : assumedly after
# job", exit status 137). The range comes from the qmaster port, which no
# two live cells share: GE_GIDS ids per exec host, 1000 per cell.
GE_GIDS=50
ge_gid_range() {
    local b=$((1000000 + GE_QMASTER_PORT * 1000 + $1 * GE_GIDS))
    echo "$b-$((b + GE_GIDS - 1))"
}

# ge_gids_free: no group of this machine has an id in this cell's 1000.
ge_gids_free() {
    local b=$((1000000 + GE_QMASTER_PORT * 1000))
    getent group | awk -F: -v lo="$b" -v hi="$((b + 999))" '
        $3 >= lo && $3 <= hi { print "group " $1 " has id " $3; bad = 1 }
        END { exit bad }'
}

# ge_ours PID: PID is an SGE daemon of this cell (each works in the cell's
# spool), not a process that took a freed PID, say another test's daemon.
ge_ours() {
    case $(readlink "/proc/$1/exe" 2>/dev/null) in
    "$GE_BIN"/sge_qmaster | "$GE_BIN"/sge_execd) ;;
    *) return 1 ;;
    esac
    case $(readlink "/proc/$1/cwd" 2>/dev/null) in
    "$GE_SPOOL"/*) return 0 ;;
    esac
    return 1
}

# ge_pid_file FILE: the PID in FILE when that process is a live SGE daemon
# of this cell.
ge_pid_file() {
    local p
    [ -s "$1" ] || return 1
    p=$(cat "$1" 2>/dev/null)
    [[ $p =~ ^[0-9]+$ ]] && ge_ours "$p" && echo "$p"
}

# ge_ready HOST...: each HOST reports load and all.q@HOST has no state flag.
ge_ready() {
    ge_cmd qhost -q -xml 2>/dev/null | awk -v want="$*" '
        BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) need[w[i]] = 1 }
        /<host name=/ { h = $0; sub(/.*<host name=\047/, "", h); sub(/\047.*/, "", h) }
        /name=\047load_avg\047/ && h in need {
            v = $0; sub(/.*\047>/, "", v); sub(/<.*/, "", v)
            if (v != "-") load[h] = 1
        }
        /qname=\047all.q\047 name=\047state_string\047/ && h in need {
            v = $0; sub(/.*\047>/, "", v); sub(/<.*/, "", v)
            if (v == "") open[h] = 1
        }
        END { for (h in need) if (!(h in load) || !(h in open)) exit 1 }'
}

ge_write_conf() {
    local d=$1
    mkdir -p "$d"
    sed -e "s#^execd_spool_dir .*#execd_spool_dir        $GE_SPOOL/execd#" \
        -e 's#^min_uid .*#min_uid                0#' \
        -e 's#^min_gid .*#min_gid                0#' \
        -e 's#^load_report_time .*#load_report_time       00:00:10#' \
        -e 's#^max_unheard .*#max_unheard            00:01:00#' \
        -e 's#^mailer .*#mailer                 /bin/true#' \
        -e "s#^gid_range .*#gid_range              $(ge_gid_range 0)#" \
        -e 's#^reporting_params .*#reporting_params       accounting=true reporting=false flush_time=00:00:15 joblog=false sharelog=00:00:00 accounting_flush_time=00:00:00#' \
        /usr/share/gridengine/default-configuration >"$d/global"
    echo "max_advance_reservations 100" >>"$d/global"
    cat >"$d/rr" <<'EOF'
pe_name            rr
slots              99999
user_lists         NONE
xuser_lists        NONE
start_proc_args    NONE
stop_proc_args     NONE
allocation_rule    $round_robin
control_slaves     TRUE
job_is_first_task  TRUE
urgency_slots      min
accounting_summary FALSE
qsort_args         NONE
EOF
    {
        echo "qname all.q"
        echo "hostlist @allhosts"
        echo "pe_list make smp mpi rr"
        echo "slots $GE_SLOTS"
        echo "shell /bin/sh"
        echo "shell_start_mode posix_compliant"
        echo "tmpdir /tmp"
        local k v
        for k in seq_no:0 load_thresholds:NONE suspend_thresholds:NONE \
            nsuspend:1 suspend_interval:00:05:00 priority:0 \
            min_cpu_interval:00:05:00 processors:UNDEFINED \
            "qtype:BATCH INTERACTIVE" ckpt_list:NONE rerun:FALSE \
            prolog:NONE epilog:NONE starter_method:NONE suspend_method:NONE \
            resume_method:NONE terminate_method:NONE notify:00:00:60 \
            owner_list:NONE user_lists:NONE xuser_lists:NONE \
            subordinate_list:NONE complex_values:NONE projects:NONE \
            xprojects:NONE calendar:NONE initial_state:default; do
            echo "${k%%:*} ${k#*:}"
        done
        for v in rt cpu fsize data stack core rss vmem; do
            echo "s_$v INFINITY"
            echo "h_$v INFINITY"
        done
    } >"$d/all.q"
}

ge_exechost_file() {
    printf 'hostname %s\nload_scaling NONE\ncomplex_values NONE\nuser_lists NONE\nxuser_lists NONE\nprojects NONE\nxprojects NONE\nusage_scaling NONE\nreport_variables NONE\n' "$1"
}

# ge_locked CMD...: run CMD holding the lock that every Loom Grid Engine
# test takes to edit /etc/hosts and to pick its networks.
ge_locked() {
    (
        flock -w 10 9 2>/dev/null
        "$@"
    ) 9>>/tmp/loom-test-ge-hosts.lock
}

# ge_hosts_edit FILTER...: rewrite /etc/hosts through FILTER (old file on
# stdin, new one on stdout), by rename (readers see the old or the new
# file, never half of one) unless /etc/hosts is a mount point. Under
# ge_locked.
ge_hosts_edit() {
    local tmp=/etc/.hosts.loom-ge.$BASHPID
    cp -p /etc/hosts "$tmp" && "$@" </etc/hosts >"$tmp" || {
        rm -f "$tmp"
        return 1
    }
    if mountpoint -q /etc/hosts 2>/dev/null; then
        cat "$tmp" >/etc/hosts && rm -f "$tmp"
    else
        mv -f "$tmp" /etc/hosts
    fi
}

# ge_claim_net N: under ge_locked, pick a 10.X that no interface, route or
# /etc/hosts line uses (another test run may be starting too), add the
# names of N emulated hosts in it to /etc/hosts, tagged with this cell (they
# must resolve for the qmaster and every client), and print 10.X.
ge_claim_net() {
    local x i k used lines=
    used=$(ip -o addr show 2>/dev/null; ip route show 2>/dev/null; cat /etc/hosts)
    for ((i = 0; i < 50; i++)); do
        x=$((100 + RANDOM % 150))
        case $used in *"10.$x."*) continue ;; esac
        for ((k = 1; k <= $1; k++)); do
            lines="${lines}10.$x.$k.2 $GE_CELL-n$k $GE_HOSTS_TAG"$'\n'
        done
        ge_hosts_edit awk -v add="$lines" '{ print } END { printf "%s", add }' ||
            return 1
        echo "10.$x"
        return 0
    done
    return 1
}

ge_hosts_clean() {
    [ -n "$GE_HOSTS_TAG" ] || return 0
    grep -qF -- "$GE_HOSTS_TAG" /etc/hosts 2>/dev/null || return 0
    ge_locked ge_hosts_edit grep -vF -- "$GE_HOSTS_TAG"
}

# ge_start_node K: emulated exec host number K.
ge_start_node() {
    local k=$1 n=$GE_CELL-n$1 ns=lg-$GE_CELL-$1 v=lg${GE_ID}v$1
    local net=$GE_NET.$k
    ip netns add "$ns" || return 1
    GE_NETNS="$GE_NETNS $ns"
    ip link add "$v" type veth peer name eth0 netns "$ns" &&
        ip addr add "$net.1/24" dev "$v" && ip link set "$v" up &&
        ip -n "$ns" addr add "$net.2/24" dev eth0 &&
        ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up || return 1
    mkdir -p "/etc/netns/$ns"
    # Its own gid_range: a local configuration, named by the host.
    mkdir -p "$GE_RUN/conf/local" &&
        printf 'mailer /bin/true\ngid_range %s\n' "$(ge_gid_range "$k")" \
            >"$GE_RUN/conf/local/$n" &&
        (cd "$GE_RUN/conf/local" && ge_q qconf -Aconf "$n") || return 1
    printf '127.0.0.1 localhost\n%s %s\n%s %s\n' "$net.1" "$GE_HOST" \
        "$net.2" "$n" >"/etc/netns/$ns/hosts"
    SGE_EXECD_PIDFILE=$GE_RUN/execd-$n.pid ip netns exec "$ns" \
        unshare --uts sh -c "hostname $n && exec $GE_BIN/sge_execd" \
        >"$GE_RUN/execd-$n.out" 2>&1 || {
        t_diag "ge: sge_execd for $n failed:" "$(cat "$GE_RUN/execd-$n.out")"
        return 1
    }
}

ge_start() {
    local extra=${1:-0} k n d aliases rev ip i taken
    GE_T0=${EPOCHREALTIME/[.,]/}
    ge_available || { t_diag "ge: $GE_WHY"; return 1; }
    [ "$extra" -le $((1000 / GE_GIDS - 1)) ] || {
        t_diag "ge: $extra emulated hosts; a cell has gid ranges for $((1000 / GE_GIDS - 1))"
        return 1
    }
    GE_ID=$((100000 + RANDOM % 900000))
    GE_CELL=loom$GE_ID
    GE_HOSTS_TAG="# loom-test-ge $GE_CELL"
    export SGE_ROOT=$T/ge
    export SGE_CELL=$GE_CELL
    GE_COMMON=$SGE_ROOT/$SGE_CELL/common
    GE_SPOOL=$SGE_ROOT/$SGE_CELL/spool
    GE_RUN=$SGE_ROOT/$SGE_CELL/run
    ge_two_ports || { t_diag "ge: no free ports"; return 1; }
    taken=$(ge_gids_free) || {
        t_diag "ge: the cell's group ids from $(ge_gid_range 0) on are taken:" \
            "$taken"
        return 1
    }
    export SGE_QMASTER_PORT=$GE_QMASTER_PORT SGE_EXECD_PORT=$GE_EXECD_PORT
    case ":$PATH:" in
    :"$GE_BIN":*) ;;
    *) export PATH=$GE_BIN:$PATH ;;
    esac
    t_cleanup ge_stop

    # A private SGE_ROOT: the package's architecture links, our cell.
    mkdir -p "$GE_COMMON" "$GE_SPOOL/qmaster" "$GE_SPOOL/execd" "$GE_RUN"
    for d in bin lib utilbin util; do
        ln -s "/var/lib/gridengine/$d" "$SGE_ROOT/$d"
    done

    # Host names. SGE names a peer by the reverse lookup of its address:
    # 127.0.0.1 gives "localhost", so every loopback name is an alias of
    # the name SGE resolves for this host.
    GE_HOST=$(ge_cmd gethostname -name 2>/dev/null)
    [ -n "$GE_HOST" ] || { t_diag "ge: SGE cannot resolve this host's name"; return 1; }
    ip=$(getent hosts "$GE_HOST" | awk '{print $1; exit}')
    case $ip in
    127.*) ;;
    *)
        t_diag "ge: $GE_HOST resolves to '$ip', not a loopback address"
        return 1
        ;;
    esac
    rev=$(ge_cmd gethostbyaddr -name "$ip" 2>/dev/null)
    aliases=$GE_HOST
    for n in $rev localhost $(awk -v ip="$ip" '$1 == ip {
            for (i = 2; i <= NF && $i !~ /^#/; i++) print $i }' /etc/hosts); do
        case " $aliases " in *" $n "*) ;; *) aliases="$aliases $n" ;; esac
    done
    echo "$aliases" >"$GE_COMMON/host_aliases"
    GE_NODES=$GE_HOST
    # Emulated hosts must resolve before the qmaster starts: it caches
    # failed look-ups for minutes.
    if [ "$extra" -gt 0 ]; then
        command -v ip >/dev/null && command -v unshare >/dev/null ||
            { t_diag "ge: emulated hosts need ip and unshare"; return 1; }
        GE_NET=$(ge_locked ge_claim_net "$extra") ||
            { t_diag "ge: no free 10.X network, or /etc/hosts not writable"; return 1; }
        for ((k = 1; k <= extra; k++)); do
            GE_NODES="$GE_NODES $GE_CELL-n$k"
        done
    fi

    cat >"$GE_COMMON/bootstrap" <<EOF
admin_user              none
default_domain          none
ignore_fqdn             true
spooling_method         classic
spooling_lib            libspoolc
spooling_params         $GE_COMMON;$GE_SPOOL/qmaster
binary_path             $GE_BIN
qmaster_spool_dir       $GE_SPOOL/qmaster
security_mode           none
listener_threads        2
worker_threads          2
scheduler_threads       1
EOF
    echo "$GE_HOST" >"$GE_COMMON/act_qmaster"
    echo "$GE_CELL" >"$GE_COMMON/cluster_name"
    ge_write_conf "$GE_RUN/conf"
    ge_q spoolinit classic libspoolc "$GE_COMMON;$GE_SPOOL/qmaster" init &&
        ge_q spooldefaults configuration "$GE_RUN/conf/global" &&
        ge_q spooldefaults complexes /usr/share/gridengine/util/resources/centry &&
        ge_q spooldefaults usersets /usr/share/gridengine/util/resources/usersets &&
        ge_q spooldefaults pes /usr/share/gridengine/util/resources/pe &&
        ge_q spooldefaults managers root &&
        ge_q spooldefaults operators root || return 1
    ge_log "cell $GE_CELL in $SGE_ROOT, ports $GE_QMASTER_PORT/$GE_EXECD_PORT"

    ge_start_qmaster || return 1

    # Objects: fast scheduling, exec hosts, @allhosts, the rr PE, all.q.
    d=$GE_RUN/conf
    ge_cmd qconf -ssconf | sed \
        -e 's#^schedule_interval .*#schedule_interval 0:0:1#' \
        -e 's#^flush_submit_sec .*#flush_submit_sec 1#' \
        -e 's#^flush_finish_sec .*#flush_finish_sec 1#' \
        -e 's#^max_reservation .*#max_reservation 10#' >"$d/sconf"
    ge_q qconf -Msconf "$d/sconf" || return 1
    for n in $GE_NODES; do
        ge_exechost_file "$n" >"$d/host.$n"
        ge_q qconf -Ae "$d/host.$n" || return 1
    done
    printf 'group_name @allhosts\nhostlist %s\n' "$GE_NODES" >"$d/allhosts"
    ge_q qconf -am "$LOOM_SERVICE_USER" || return 1
    ge_q qconf -as "$GE_HOST" && ge_q qconf -Ahgrp "$d/allhosts" &&
        ge_q qconf -Ap "$d/rr" &&
        ge_q qconf -Aq "$d/all.q" || return 1

    # Exec daemons: this host's, then the emulated ones.
    (cd / && SGE_EXECD_PIDFILE=$GE_RUN/execd.pid exec "$GE_BIN/sge_execd") \
        >"$GE_RUN/execd.out" 2>&1 || {
        t_diag "ge: sge_execd failed:" "$(cat "$GE_RUN/execd.out")"
        return 1
    }
    for ((k = 1; k <= extra; k++)); do
        ge_start_node "$k" || return 1
    done
    for ((i = 0; i < 450; i++)); do
        ge_ready $GE_NODES && break
        sleep 0.2
    done
    GE_EXECD_PIDS=
    for f in "$GE_RUN"/execd*.pid; do
        GE_EXECD_PIDS="$GE_EXECD_PIDS $(ge_pid_file "$f")"
    done
    ge_ready $GE_NODES || {
        t_diag "ge: exec hosts not ready within 90 s:" \
            "$(ge_cmd qhost -q 2>&1)" \
            "$(tail -n 10 "$GE_SPOOL"/execd/*/messages 2>&1)"
        return 1
    }
    GE_ENV="env.SGE_ROOT = $SGE_ROOT
env.SGE_CELL = $SGE_CELL
env.SGE_QMASTER_PORT = $SGE_QMASTER_PORT
env.SGE_EXECD_PORT = $SGE_EXECD_PORT"
    ge_log "ready: exec hosts $GE_NODES (execd pids$GE_EXECD_PIDS)"
}

# ge_start_qmaster: start sge_qmaster on the cell's spool (again, after
# ge_kill_qmaster: it recovers its jobs from the spool) and wait (90 s at
# most) until it answers.
ge_start_qmaster() {
    local i
    rm -f "$GE_RUN/qmaster.pid"
    (cd "$GE_SPOOL/qmaster" && SGE_QMASTER_PIDFILE=$GE_RUN/qmaster.pid \
        exec "$GE_BIN/sge_qmaster") >"$GE_RUN/qmaster.out" 2>&1 || {
        t_diag "ge: sge_qmaster failed:" "$(cat "$GE_RUN/qmaster.out")"
        return 1
    }
    for ((i = 0; i < 900; i++)); do
        GE_QMASTER_PID=$(ge_pid_file "$GE_RUN/qmaster.pid") &&
            ge_cmd qconf -sh >/dev/null 2>&1 && break
        GE_QMASTER_PID=
        sleep 0.1
    done
    [ -n "$GE_QMASTER_PID" ] || {
        t_diag "ge: the qmaster did not answer within 90 s:" \
            "$(tail -n 20 "$GE_SPOOL/qmaster/messages" 2>&1)"
        return 1
    }
    ge_log "sge_qmaster up, pid $GE_QMASTER_PID"
}

# ge_kill_pids SIGNAL PIDS...: signal each PID that is still an SGE daemon
# of this cell.
ge_kill_pids() {
    local sig=$1 p
    shift
    for p in "$@"; do
        ge_ours "$p" && kill "-$sig" "$p" 2>/dev/null
    done
    return 0
}

ge_kill_qmaster() {
    [ -n "$GE_QMASTER_PID" ] || return 0
    ge_kill_pids KILL "$GE_QMASTER_PID"
    wait_dead "$GE_QMASTER_PID" 50
}

ge_stop() {
    local p c f hosts pids= i qm=0
    [ -n "$GE_CELL" ] && [ -d "${GE_RUN:-/nonexistent}" ] || {
        ge_hosts_clean
        return 0
    }
    GE_T0=${EPOCHREALTIME/[.,]/}
    for f in "$GE_RUN"/execd*.pid; do
        p=$(ge_pid_file "$f") && pids="$pids $p"
    done
    # With a qmaster: delete every job, then qconf -kej (each execd kills
    # its jobs and exits). Without one, an execd takes seconds to give up
    # on it: SIGKILL (its jobs are killed below).
    if [ -n "$GE_QMASTER_PID" ] && alive "$GE_QMASTER_PID"; then
        qm=1
        timeout 10 "$GE_BIN/qdel" -f -u '*' >/dev/null 2>&1
        hosts=$(echo $GE_NODES | tr ' ' ,)
        timeout 10 "$GE_BIN/qconf" -kej "$hosts" >/dev/null 2>&1
    else
        ge_kill_pids KILL $pids
    fi
    for ((i = 0; i < 50; i++)); do
        c=
        for p in $pids; do alive "$p" && c="$c $p"; done
        [ -n "$c" ] || break
        sleep 0.1
    done
    ge_kill_pids KILL $c
    # Jobs whose execd died: shepherds working in this cell's spool.
    for p in $(find /proc/[0-9]*/cwd -maxdepth 0 -lname "$GE_SPOOL/execd/*" \
        2>/dev/null | cut -d/ -f3); do
        for c in $(ps -o pid= --ppid "$p" 2>/dev/null); do
            kill -KILL -- "-$c" 2>/dev/null || kill -KILL "$c" 2>/dev/null
        done
        kill -KILL "$p" 2>/dev/null
    done
    [ "$qm" = 1 ] && ge_kill_qmaster
    for ns in $GE_NETNS; do
        ip netns del "$ns" 2>/dev/null
        rm -rf "/etc/netns/$ns"
    done
    GE_NETNS=
    rmdir /etc/netns 2>/dev/null
    ge_hosts_clean
    rm -rf "$SGE_ROOT"
    ge_log "cell $GE_CELL stopped and removed"
    GE_CELL=
    GE_QMASTER_PID=
    return 0
}

# ge_wait_job_gone ID SECS: 0 once qstat no longer lists job ID.
ge_wait_job_gone() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        ge_cmd qstat -u '*' 2>/dev/null | awk -v j="$1" '$1 == j {f = 1} END {exit !f}' ||
            return 0
        sleep 0.1
    done
    return 1
}
